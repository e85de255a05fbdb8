//! Dual-chain serving whatever the stack: which of a server's chains a connection gets, by
//! the client's order or the server's (`--chain-order`). The BoringSSL and rustls engines
//! choose with `choose` (from the ClientHello's signature_algorithms); the OpenSSL engine
//! has libssl choose, by the client's order or, with SSL_OP_CIPHER_SERVER_PREFERENCE, by
//! the order of its own signature algorithms (post-quantum first); the Go engine repeats
//! `choose` in engine/go/tlsconf.go. docs/methods/rollout.md states each stack's rule.

/// Whose order picks a dual-chain server's chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainOrder {
    /// The chain whose leaf signs the first of the client's schemes it can.
    Client,
    /// The server's order, post-quantum chains first: the first of them whose leaf signs a
    /// scheme the client offers.
    Server,
}

/// Whether a TLS SignatureScheme is classical: ECDSA, RSA (PKCS#1 and PSS) or EdDSA (RFC
/// 8446, 4.2.3); every other scheme a chainlab leaf signs is post-quantum (ML-DSA,
/// SLH-DSA, composite ML-DSA, liboqs' families).
pub fn is_classical(scheme: u16) -> bool {
    matches!(
        scheme,
        0x0201 | 0x0203 | 0x0401 | 0x0403 | 0x0501 | 0x0503 | 0x0601 | 0x0603
    ) || (0x0804..=0x080b).contains(&scheme)
}

/// The chain (index into `chains`, each the schemes its leaf signs, in the server's order:
/// `--pki`'s then `--second-pki`'s) a client offering `offered` (in its order) is sent, or
/// None when no leaf signs a scheme it offers.
pub fn choose(order: ChainOrder, offered: &[u16], chains: &[&[u16]]) -> Option<usize> {
    let signs = |i: usize, s: u16| chains[i].contains(&s);
    match order {
        ChainOrder::Client => offered
            .iter()
            .find_map(|&s| (0..chains.len()).find(|&i| signs(i, s))),
        ChainOrder::Server => {
            let post_quantum = |i: &usize| chains[*i].iter().any(|&s| !is_classical(s));
            let (pq, classical): (Vec<usize>, Vec<usize>) =
                (0..chains.len()).partition(post_quantum);
            pq.into_iter()
                .chain(classical)
                .find(|&i| offered.iter().any(|&s| signs(i, s)))
        }
    }
}

/// TLS SignatureScheme code points by the names records and `--sigalgs` use (RFC 8446,
/// draft-ietf-tls-mldsa, draft-reddy-tls-slhdsa): for an engine whose library names its
/// schemes but does not number them for us (OpenSSL).
pub const SCHEME_CODES: &[(&str, u16)] = &[
    ("rsa_pkcs1_sha256", 0x0401),
    ("rsa_pkcs1_sha384", 0x0501),
    ("rsa_pkcs1_sha512", 0x0601),
    ("ecdsa_secp256r1_sha256", 0x0403),
    ("ecdsa_secp384r1_sha384", 0x0503),
    ("ecdsa_secp521r1_sha512", 0x0603),
    ("rsa_pss_rsae_sha256", 0x0804),
    ("rsa_pss_rsae_sha384", 0x0805),
    ("rsa_pss_rsae_sha512", 0x0806),
    ("ed25519", 0x0807),
    ("ed448", 0x0808),
    ("mldsa44", 0x0904),
    ("mldsa65", 0x0905),
    ("mldsa87", 0x0906),
    ("slhdsa_sha2_128s", 0x0911),
    ("slhdsa_sha2_128f", 0x0912),
    ("slhdsa_sha2_192s", 0x0913),
    ("slhdsa_sha2_192f", 0x0914),
    ("slhdsa_sha2_256s", 0x0915),
    ("slhdsa_sha2_256f", 0x0916),
    ("slhdsa_shake_128s", 0x0917),
    ("slhdsa_shake_128f", 0x0918),
    ("slhdsa_shake_192s", 0x0919),
    ("slhdsa_shake_192f", 0x091a),
    ("slhdsa_shake_256s", 0x091b),
    ("slhdsa_shake_256f", 0x091c),
];

/// The code point of a scheme's name (`SCHEME_CODES`).
pub fn scheme_code(name: &str) -> Option<u16> {
    SCHEME_CODES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, c)| c)
}

/// The algorithm of a hierarchy's leaf (`pki`'s `manifest.json`: the last of its `chain`),
/// which each stack maps to the schemes it signs.
pub fn leaf_algorithm(dir: &std::path::Path) -> anyhow::Result<String> {
    use anyhow::Context;
    let path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let manifest: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    manifest["chain"]
        .as_array()
        .and_then(|c| c.last())
        .and_then(|a| a.as_str())
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("{}: no chain", path.display()))
}

/// The schemes of a ClientHello's signature_algorithms extension body (RFC 8446, 4.2.3: a
/// two-byte length, then two bytes per scheme), or None where it is malformed.
pub fn parse_signature_algorithms(body: &[u8]) -> Option<Vec<u16>> {
    let (len, rest) = body.split_first_chunk::<2>()?;
    let len = usize::from(u16::from_be_bytes(*len));
    if len != rest.len() || len % 2 != 0 {
        return None;
    }
    Some(
        rest.chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const ECDSA: u16 = 0x0403;
    const MLDSA65: u16 = 0x0905;
    const CHAINS: &[&[u16]] = &[&[ECDSA], &[MLDSA65]]; // classical chain first, as rollout.toml

    #[test]
    fn the_client_order_sends_the_chain_of_the_clients_first_scheme() {
        assert_eq!(
            choose(ChainOrder::Client, &[MLDSA65, ECDSA], CHAINS),
            Some(1)
        );
        assert_eq!(
            choose(ChainOrder::Client, &[ECDSA, MLDSA65], CHAINS),
            Some(0)
        );
        assert_eq!(choose(ChainOrder::Client, &[ECDSA], CHAINS), Some(0));
        assert_eq!(choose(ChainOrder::Client, &[0x0807], CHAINS), None);
    }

    #[test]
    fn the_server_order_sends_the_post_quantum_chain_to_any_client_that_can_take_it() {
        assert_eq!(
            choose(ChainOrder::Server, &[ECDSA, MLDSA65], CHAINS),
            Some(1)
        );
        assert_eq!(
            choose(ChainOrder::Server, &[MLDSA65, ECDSA], CHAINS),
            Some(1)
        );
        assert_eq!(
            choose(ChainOrder::Server, &[ECDSA, 0x0804], CHAINS),
            Some(0)
        );
        assert_eq!(choose(ChainOrder::Server, &[0x0807], CHAINS), None);
        // Two post-quantum chains keep the server's order between them.
        let both: &[&[u16]] = &[&[0x0911], &[MLDSA65]];
        assert_eq!(
            choose(ChainOrder::Server, &[MLDSA65, 0x0911], both),
            Some(0)
        );
    }

    #[test]
    fn classical_schemes_are_ecdsa_rsa_and_eddsa() {
        for s in [
            0x0403, 0x0503, 0x0603, 0x0401, 0x0804, 0x0807, 0x0808, 0x080b, 0x0201,
        ] {
            assert!(is_classical(s), "{s:#06x}");
        }
        for s in [0x0904, 0x0905, 0x0906, 0x0911, 0xfe40, 0xfe43] {
            assert!(!is_classical(s), "{s:#06x}");
        }
    }

    #[test]
    fn scheme_names_have_their_code_points() {
        assert_eq!(scheme_code("mldsa65"), Some(0x0905));
        assert_eq!(scheme_code("slhdsa_shake_256f"), Some(0x091c));
        assert_eq!(scheme_code("ecdsa_secp256r1_sha256"), Some(0x0403));
        assert_eq!(scheme_code("nope"), None);
        let mut codes: Vec<u16> = SCHEME_CODES.iter().map(|&(_, c)| c).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), SCHEME_CODES.len(), "one name per code point");
    }

    #[test]
    fn a_signature_algorithms_body_is_read_and_a_bad_one_refused() {
        assert_eq!(
            parse_signature_algorithms(&[0, 4, 0x09, 0x05, 0x04, 0x03]),
            Some(vec![MLDSA65, ECDSA])
        );
        assert_eq!(parse_signature_algorithms(&[0, 3, 0x09, 0x05, 0x04]), None);
        assert_eq!(parse_signature_algorithms(&[0, 4, 0x09, 0x05]), None);
        assert_eq!(parse_signature_algorithms(&[0]), None);
    }
}
