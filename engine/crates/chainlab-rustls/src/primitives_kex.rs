//! rustls' own key exchange (its aws-lc provider's `SupportedKxGroup`s, the ones `serve` and
//! `handshake` offer: capabilities::GROUPS), timed per operation like `chainlab-engine
//! primitives --op keygen|encaps|decaps|derive`, each through the call a TLS 1.3 handshake
//! makes:
//! - `keygen`: the client's key share, `start()` and its public key (a hybrid: both halves);
//! - `encaps` (a KEM or a hybrid): the server's part, `start_and_complete(client share)`;
//! - `decaps`: the client's part, `complete(server share)` on its started exchange;
//! - `derive` (a Diffie-Hellman group): `complete(peer share)`.
//!
//! What an operation consumes (a started exchange) is made before each timed operation.

use anyhow::{anyhow, bail, Result};
use chainlab_record::primitives::{KeyExchange, SignatureOp};
use rustls::crypto::{ActiveKeyExchange, SupportedKxGroup};

use crate::capabilities::GROUPS;

/// A group of the rustls stack.
pub struct Group {
    kx: &'static dyn SupportedKxGroup,
    /// ML-KEM or a hybrid with it (encaps, decaps), else Diffie-Hellman (derive).
    kem: bool,
}

impl Group {
    /// The group of an OpenSSL `--groups` name, if the rustls stack has it.
    pub fn named(name: &str) -> Option<Group> {
        GROUPS
            .iter()
            .find(|g| g.names.contains(&name))
            .map(|g| Group {
                kx: g.kx,
                kem: g.recorded.contains("MLKEM"),
            })
    }

    /// Every group's name, for an error.
    pub fn names() -> Vec<&'static str> {
        GROUPS.iter().map(|g| g.names[0]).collect()
    }

    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>> {
        self.kx.start().map_err(rustls_error)
    }
}

fn rustls_error(e: rustls::Error) -> anyhow::Error {
    anyhow!("rustls key exchange: {e}")
}

impl KeyExchange for Group {
    fn prepare(&self, op: SignatureOp) -> Result<Box<dyn FnOnce() -> Result<()> + '_>> {
        match (op, self.kem) {
            (SignatureOp::Keygen, _) => Ok(Box::new(move || {
                let started = self.start()?;
                std::hint::black_box(started.pub_key());
                Ok(())
            })),
            (SignatureOp::Encaps, true) => {
                let client = self.start()?.pub_key().to_vec();
                Ok(Box::new(move || {
                    let done = self.kx.start_and_complete(&client).map_err(rustls_error)?;
                    std::hint::black_box(done);
                    Ok(())
                }))
            }
            (SignatureOp::Decaps, true) => {
                let client = self.start()?;
                let server = self
                    .kx
                    .start_and_complete(client.pub_key())
                    .map_err(rustls_error)?;
                Ok(Box::new(move || {
                    let secret = client.complete(&server.pub_key).map_err(rustls_error)?;
                    std::hint::black_box(secret);
                    Ok(())
                }))
            }
            (SignatureOp::Derive, false) => {
                let own = self.start()?;
                let peer = self.start()?.pub_key().to_vec();
                Ok(Box::new(move || {
                    let secret = own.complete(&peer).map_err(rustls_error)?;
                    std::hint::black_box(secret);
                    Ok(())
                }))
            }
            (op, kem) => bail!(
                "--op {}: not an operation of this group; allowed: {}",
                op.name(),
                if kem {
                    "keygen, encaps, decaps"
                } else {
                    "keygen, derive"
                }
            ),
        }
    }
}
