//! The MTC CA certificate (draft-ietf-plants-merkle-tree-certs-07, "Certification Authority
//! Certificates"): how a relying party that verifies MTCs with its X.509 code (BoringSSL's
//! `X509_V_FLAG_USE_MTC_DRAFT_PLANTS_07`) is told a CA's ID, its CA cosigner's key and
//! algorithm, and the serials it issues. Its subject is exactly one RDN holding the CA ID
//! (as an MTC's issuer names it); its key is the CA cosigner's; its critical
//! id-pe-mtcCertificationAuthority-SHA256 extension is `SEQUENCE { cosigner
//! AlgorithmIdentifier, minSerial INTEGER, maxSerial INTEGER }`. It is self-signed with that
//! key, as a trust anchor usually is; the relying party takes it as a trust anchor and does
//! not check that signature.
//!
//! This module writes the TBSCertificate and the Certificate around a signature; the engine
//! signs with its own stack, as it signs every other certificate.

use anyhow::Result;

use crate::der;
use crate::entry::ca_name;
use crate::{Encoding, OID_MTC_CA_EXTENSION};

const OID_BASIC_CONSTRAINTS: &str = "2.5.29.19";
const OID_KEY_USAGE: &str = "2.5.29.15";

/// What an MTC CA certificate says.
pub struct CaCertificate<'a> {
    pub ca_id: &'a str,
    /// The CA cosigner's SubjectPublicKeyInfo DER.
    pub spki: &'a [u8],
    /// The AlgorithmIdentifier DER its cosignatures are made with, which is also the one
    /// this certificate's self-signature is made with.
    pub algorithm: &'a [u8],
    /// The serials of the MTCs it issues, `[min, max]` (each at least 2^48: log 1 onwards).
    pub serials: (u64, u64),
    pub serial: u64,
    /// `(notBefore, notAfter)`, each DER-encoded Time.
    pub validity: (&'a [u8], &'a [u8]),
}

impl CaCertificate<'_> {
    /// The TBSCertificate (to be signed with the CA cosigner's key).
    pub fn tbs(&self) -> Result<Vec<u8>> {
        let name = ca_name(self.ca_id, Encoding::Plants07)?;
        let version = der::tlv(0xa0, &der::integer(2));
        let validity = der::sequence(&[self.validity.0, self.validity.1]);
        let boolean_true = der::tlv(0x01, &[0xff]);
        let extension = |oid: &str, value: &[u8]| -> Result<Vec<u8>> {
            Ok(der::sequence(&[
                &der::oid(oid)?,
                &boolean_true,
                &der::tlv(der::OCTET_STRING, value),
            ]))
        };
        let basic = extension(OID_BASIC_CONSTRAINTS, &der::sequence(&[&boolean_true]))?;
        // keyUsage keyCertSign (bit 5): BIT STRING, 2 unused bits, 0x04.
        let usage = extension(OID_KEY_USAGE, &der::tlv(der::BIT_STRING, &[0x02, 0x04]))?;
        let mtc = extension(
            OID_MTC_CA_EXTENSION,
            &der::sequence(&[
                self.algorithm,
                &der::integer(self.serials.0),
                &der::integer(self.serials.1),
            ]),
        )?;
        let extensions = der::tlv(0xa3, &der::sequence(&[&basic, &usage, &mtc]));
        Ok(der::sequence(&[
            &version,
            &der::integer(self.serial),
            self.algorithm,
            &name,
            &validity,
            &name,
            self.spki,
            &extensions,
        ]))
    }

    /// The Certificate of `tbs` with `signature` over it.
    pub fn certificate(&self, tbs: &[u8], signature: &[u8]) -> Vec<u8> {
        let mut bits = vec![0u8];
        bits.extend_from_slice(signature);
        der::sequence(&[tbs, self.algorithm, &der::tlv(der::BIT_STRING, &bits)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{ca_id_of, Certificate};

    #[test]
    fn the_ca_certificate_names_the_ca_and_its_serials() {
        // An Ed25519 key and algorithm, as DER, for the layout only.
        let algorithm = der::sequence(&[&der::oid("1.3.101.112").unwrap()]);
        let spki = der::sequence(&[&algorithm, &der::tlv(der::BIT_STRING, &[0; 33])]);
        let time = der::tlv(der::UTC_TIME, b"250101000000Z");
        let ca = CaCertificate {
            ca_id: "32473.1",
            spki: &spki,
            algorithm: &algorithm,
            serials: (1 << 48, (2 << 48) - 1),
            serial: 1,
            validity: (&time, &time),
        };
        let tbs = ca.tbs().unwrap();
        let der = ca.certificate(&tbs, &[7; 64]);
        let cert = Certificate::parse(&der).unwrap();
        assert_eq!(
            ca_id_of(&cert.tbs.subject),
            Some(("32473.1".to_owned(), Encoding::Plants07))
        );
        assert_eq!(cert.tbs.subject.raw, cert.tbs.issuer.raw);
        assert_eq!(cert.signature_algorithm.raw, algorithm.as_slice());
        // The extension: critical, the cosigner's algorithm, then both serials.
        let ext = der::oid_contents(OID_MTC_CA_EXTENSION).unwrap();
        let at = der.windows(ext.len()).position(|w| w == ext).unwrap();
        let tail = &der[at + ext.len()..];
        assert_eq!(&tail[..3], &[0x01, 0x01, 0xff]);
        let value = der::read(&tail[3..]).unwrap().0;
        let fields = der::elements(
            der::expect(value.contents, der::SEQUENCE, "ext")
                .unwrap()
                .contents,
        )
        .unwrap();
        assert_eq!(fields[0].raw, algorithm.as_slice());
        assert_eq!(der::integer_value(&fields[1]).unwrap(), 1 << 48);
        assert_eq!(der::integer_value(&fields[2]).unwrap(), (2 << 48) - 1);
    }
}
