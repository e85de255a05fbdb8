//! The issuance log's entries (the draft's "Log Entries"): an MTCLogEntry of type
//! `tbs_cert_entry` is the certificate's TBSCertificate fields without the serial number
//! and signature algorithm, the key replaced by its algorithm and the hash of the whole
//! SubjectPublicKeyInfo, with no SEQUENCE header; the MTCProof's `extensions` come first.

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

use crate::der::{self, Element};
use crate::{Encoding, Hash};

/// MTCLogEntryType tbs_cert_entry.
const TBS_CERT_ENTRY: [u8; 2] = [0, 1];

/// A certificate: its TBSCertificate's parts, its signature algorithm and signature value.
#[derive(Debug, Clone)]
pub struct Certificate<'a> {
    pub tbs: Tbs<'a>,
    /// The outer signatureAlgorithm's AlgorithmIdentifier contents.
    pub signature_algorithm: Element<'a>,
    /// The signature BIT STRING's bytes (after its unused-bits octet, which must be 0).
    pub signature: &'a [u8],
}

/// A TBSCertificate's fields, each as encoded.
#[derive(Debug, Clone)]
pub struct Tbs<'a> {
    /// `[0] EXPLICIT Version`, absent for v1.
    pub version: Option<Element<'a>>,
    pub serial: Element<'a>,
    pub signature: Element<'a>,
    pub issuer: Element<'a>,
    pub validity: Element<'a>,
    pub subject: Element<'a>,
    pub spki: Element<'a>,
    /// The SubjectPublicKeyInfo's `algorithm` AlgorithmIdentifier.
    pub spki_algorithm: Element<'a>,
    /// Everything after the SubjectPublicKeyInfo (unique IDs, extensions), as encoded.
    pub rest: &'a [u8],
}

impl<'a> Certificate<'a> {
    pub fn parse(der: &'a [u8]) -> Result<Certificate<'a>> {
        let cert = der::expect(der, der::SEQUENCE, "Certificate")?;
        let parts = der::elements(cert.contents)?;
        let [tbs, alg, sig] = parts[..] else {
            bail!("Certificate: {} elements, expected 3", parts.len());
        };
        if alg.tag != der::SEQUENCE || sig.tag != der::BIT_STRING {
            bail!("Certificate: no signatureAlgorithm and signatureValue");
        }
        let signature = match sig.contents.split_first() {
            Some((0, bits)) => bits,
            _ => bail!("Certificate: signatureValue is not a whole number of octets"),
        };
        Ok(Certificate {
            tbs: Tbs::parse(tbs)?,
            signature_algorithm: alg,
            signature,
        })
    }
}

impl<'a> Tbs<'a> {
    pub fn parse(tbs: Element<'a>) -> Result<Tbs<'a>> {
        if tbs.tag != der::SEQUENCE {
            bail!("TBSCertificate is not a SEQUENCE");
        }
        let mut input = tbs.contents;
        let mut next = |what: &str| -> Result<Element<'a>> {
            let (e, rest) = der::read(input).with_context(|| format!("TBSCertificate {what}"))?;
            input = rest;
            Ok(e)
        };
        let first = next("version or serialNumber")?;
        let (version, serial) = if first.tag == 0xa0 {
            (Some(first), next("serialNumber")?)
        } else {
            (None, first)
        };
        let signature = next("signature")?;
        let issuer = next("issuer")?;
        let validity = next("validity")?;
        let subject = next("subject")?;
        let spki = next("subjectPublicKeyInfo")?;
        let spki_algorithm = der::read(spki.contents)
            .context("subjectPublicKeyInfo algorithm")?
            .0;
        Ok(Tbs {
            version,
            serial,
            signature,
            issuer,
            validity,
            subject,
            spki,
            spki_algorithm,
            rest: input,
        })
    }

    /// The MTCLogEntry this TBSCertificate is logged as, with the MTCProof's `extensions`
    /// (`extensions` is the TLS-encoded field, its 2-byte length included).
    pub fn log_entry(&self, extensions: &[u8]) -> Vec<u8> {
        let spki_hash: Hash = Sha256::digest(self.spki.raw).into();
        let mut out = Vec::with_capacity(self.spki.raw.len().min(64) + self.rest.len() + 256);
        out.extend_from_slice(extensions);
        out.extend_from_slice(&TBS_CERT_ENTRY);
        if let Some(v) = &self.version {
            out.extend_from_slice(v.raw);
        }
        for part in [
            &self.issuer,
            &self.validity,
            &self.subject,
            &self.spki_algorithm,
        ] {
            out.extend_from_slice(part.raw);
        }
        out.extend_from_slice(&der::tlv(der::OCTET_STRING, &spki_hash));
        out.extend_from_slice(self.rest);
        out
    }
}

/// A CA ID as a distinguished name: one RDN, one attribute. -07: id-rdna-trustAnchorID
/// holding the ID as a RELATIVE-OID (`1.3.6.1.5.5.7.25.3=#0d0481fd5901` for 32473.1); the
/// early experiments: 1.3.6.1.4.1.44363.47.1 holding its ASCII form as a UTF8String.
pub fn ca_name(ca_id: &str, encoding: Encoding) -> Result<Vec<u8>> {
    let value = match encoding {
        Encoding::Plants07 => der::tlv(der::RELATIVE_OID, &der::relative_oid(ca_id)?),
        Encoding::Experimental => der::tlv(der::UTF8_STRING, ca_id.as_bytes()),
    };
    let attribute = der::sequence(&[&der::oid(encoding.ca_id_attribute())?, &value]);
    Ok(der::sequence(&[&der::tlv(der::SET, &attribute)]))
}

/// The CA ID a name holds and the encoding it is written in, if it is a CA ID name.
pub fn ca_id_of(name: &Element<'_>) -> Option<(String, Encoding)> {
    let rdn = der::expect(name.contents, der::SET, "RDN").ok()?;
    let attr = der::expect(rdn.contents, der::SEQUENCE, "attribute").ok()?;
    let parts = der::elements(attr.contents).ok()?;
    let [kind, value] = parts[..] else {
        return None;
    };
    let encoding = Encoding::ALL
        .into_iter()
        .find(|e| der::oid_contents(e.ca_id_attribute()).ok().as_deref() == Some(kind.contents))?;
    let id = match (encoding, value.tag) {
        (Encoding::Plants07, der::RELATIVE_OID) => der::relative_oid_text(value.contents)?,
        (Encoding::Experimental, der::UTF8_STRING) => {
            String::from_utf8(value.contents.to_vec()).ok()?
        }
        _ => return None,
    };
    Some((id, encoding))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drafts_example_ca_names() {
        // -07: 1.3.6.1.5.5.7.25.3=#0d0481fd5901 (the draft's RFC 4514 example).
        let name = ca_name("32473.1", Encoding::Plants07).unwrap();
        assert!(
            name.ends_with(&[0x0d, 0x04, 0x81, 0xfd, 0x59, 0x01]),
            "{name:02x?}"
        );
        let e = der::expect(&name, der::SEQUENCE, "Name").unwrap();
        assert_eq!(
            ca_id_of(&e),
            Some(("32473.1".to_owned(), Encoding::Plants07))
        );
        // The early experiments: 1.3.6.1.4.1.44363.47.1=#0c0733323437332e31.
        let name = ca_name("32473.1", Encoding::Experimental).unwrap();
        assert!(name.ends_with(&[0x0c, 0x07, b'3', b'2', b'4', b'7', b'3', b'.', b'1']));
        let e = der::expect(&name, der::SEQUENCE, "Name").unwrap();
        assert_eq!(
            ca_id_of(&e),
            Some(("32473.1".to_owned(), Encoding::Experimental))
        );
    }
}
