//! Certificate chains as the peer sent them: what a record's `peer_chain` holds. The client
//! records the server's chain; a server that asks for client certificates records the
//! client's. Names as the OpenSSL engine gives them, so records of both stacks compare.

use boring::nid::Nid;
use boring::pkey::Id;
use boring::ssl::SslRef;
use boring::x509::X509Ref;
use chainlab_record::record::ObservedCert;

/// The certificates the peer sent, leaf first; `None` when it sent none (a resumed
/// handshake, or a server that asked for no client certificate).
pub fn observed_chain(
    ssl: &SslRef,
    server_side: bool,
) -> anyhow::Result<Option<Vec<ObservedCert>>> {
    let Some(chain) = ssl.peer_cert_chain() else {
        return Ok(None);
    };
    let mut observed = Vec::with_capacity(chain.len() + 1);
    if server_side {
        // On the server, SSL_get_peer_cert_chain leaves out the client's leaf.
        match ssl.peer_certificate() {
            Some(leaf) => observed.push(observed_cert(&leaf)?),
            None => return Ok(None),
        }
    }
    for cert in chain {
        observed.push(observed_cert(cert)?);
    }
    Ok(Some(observed))
}

fn observed_cert(cert: &X509Ref) -> anyhow::Result<ObservedCert> {
    let subject = cert
        .subject_name()
        .entries()
        .map(|e| {
            let key = e.object().nid().short_name().unwrap_or("?");
            Ok(format!("{key}={}", e.data().as_utf8()?))
        })
        .collect::<anyhow::Result<Vec<_>>>()?
        .join(", ");
    let sig_nid = cert.signature_algorithm().object().nid();
    Ok(ObservedCert {
        der_bytes: cert.to_der()?.len(),
        subject,
        sig_alg: sig_nid.long_name().unwrap_or("unknown").to_owned(),
        key_alg: key_algorithm(cert)?,
    })
}

/// The certificate's key type in the vocabulary of `pki --chain` ("ML-DSA-65",
/// "ECDSA-P256", "Ed25519", "RSA-2048"), else BoringSSL's name of its type.
fn key_algorithm(cert: &X509Ref) -> anyhow::Result<String> {
    let key = cert.public_key()?;
    Ok(match key.id() {
        Id::EC => match key.ec_key()?.group().curve_name() {
            Some(Nid::X9_62_PRIME256V1) => "ECDSA-P256".to_owned(),
            Some(Nid::SECP384R1) => "ECDSA-P384".to_owned(),
            Some(nid) => format!("EC-{}", nid.short_name().unwrap_or("unknown")),
            None => "EC".to_owned(),
        },
        Id::RSA => format!("RSA-{}", key.bits()),
        Id::ED25519 => "Ed25519".to_owned(),
        other => Nid::from_raw(other.as_raw())
            .long_name()
            .unwrap_or("unknown")
            .to_owned(),
    })
}
