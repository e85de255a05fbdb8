//! The few DER steps a Merkle Tree Certificate needs: split an element into its tag, header
//! and contents, list a SEQUENCE's elements as raw bytes (the log entry hashes fields as
//! they were encoded), and write the handful of types a TBSCertificate of ours holds.
//! Single-byte tags only (all X.509 uses); lengths in definite form.

use anyhow::{bail, Result};

pub const SEQUENCE: u8 = 0x30;
pub const SET: u8 = 0x31;
pub const INTEGER: u8 = 0x02;
pub const BIT_STRING: u8 = 0x03;
pub const OCTET_STRING: u8 = 0x04;
pub const OID: u8 = 0x06;
pub const RELATIVE_OID: u8 = 0x0d;
pub const UTF8_STRING: u8 = 0x0c;
pub const UTC_TIME: u8 = 0x17;
pub const GENERALIZED_TIME: u8 = 0x18;

/// One element: its tag, its whole encoding and its contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element<'a> {
    pub tag: u8,
    pub raw: &'a [u8],
    pub contents: &'a [u8],
}

/// The first element of `input` and what follows it.
pub fn read(input: &[u8]) -> Result<(Element<'_>, &[u8])> {
    let (&tag, rest) = input
        .split_first()
        .ok_or_else(|| anyhow::anyhow!("DER: expected an element, found the end"))?;
    let (&first, rest) = rest
        .split_first()
        .ok_or_else(|| anyhow::anyhow!("DER: element 0x{tag:02x} has no length"))?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            bail!("DER: element 0x{tag:02x} has a bad length of {n} octets");
        }
        let len = rest[..n].iter().fold(0usize, |a, &b| (a << 8) | b as usize);
        (len, &rest[n..])
    };
    if rest.len() < len {
        bail!(
            "DER: element 0x{tag:02x} claims {len} bytes, {} remain",
            rest.len()
        );
    }
    let header = input.len() - rest.len();
    Ok((
        Element {
            tag,
            raw: &input[..header + len],
            contents: &rest[..len],
        },
        &rest[len..],
    ))
}

/// The one element `input` holds, of tag `tag`; `what` names it in errors.
pub fn expect<'a>(input: &'a [u8], tag: u8, what: &str) -> Result<Element<'a>> {
    let (e, rest) = read(input)?;
    if e.tag != tag {
        bail!("DER: {what}: tag 0x{:02x}, expected 0x{tag:02x}", e.tag);
    }
    if !rest.is_empty() {
        bail!("DER: {what}: {} bytes after it", rest.len());
    }
    Ok(e)
}

/// The elements of a constructed element's contents, in order.
pub fn elements(mut contents: &[u8]) -> Result<Vec<Element<'_>>> {
    let mut out = Vec::new();
    while !contents.is_empty() {
        let (e, rest) = read(contents)?;
        out.push(e);
        contents = rest;
    }
    Ok(out)
}

/// `tag`, definite length, `contents`.
pub fn tlv(tag: u8, contents: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = contents.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(contents);
    out
}

/// A SEQUENCE of already-encoded elements.
pub fn sequence(parts: &[&[u8]]) -> Vec<u8> {
    tlv(SEQUENCE, &parts.concat())
}

/// A BIT STRING with no unused bits.
pub fn bit_string(bytes: &[u8]) -> Vec<u8> {
    let mut contents = Vec::with_capacity(bytes.len() + 1);
    contents.push(0);
    contents.extend_from_slice(bytes);
    tlv(BIT_STRING, &contents)
}

/// SubjectPublicKeyInfo: SEQUENCE { AlgorithmIdentifier, BIT STRING of the public key }.
pub fn spki(algorithm_identifier: &[u8], public: &[u8]) -> Vec<u8> {
    sequence(&[algorithm_identifier, &bit_string(public)])
}

/// A SubjectPublicKeyInfo's algorithm (as `algorithm_of` reads its AlgorithmIdentifier;
/// None for another table's) and raw public key; `name` names an algorithm in errors.
pub fn read_spki<T>(
    spki: &[u8],
    algorithm_of: impl Fn(&Element<'_>) -> Result<Option<T>>,
    name: impl Fn(&T) -> &str,
) -> Result<Option<(T, Vec<u8>)>> {
    let outer = expect(spki, SEQUENCE, "SubjectPublicKeyInfo")?;
    let parts = elements(outer.contents)?;
    let [alg_id, key] = parts.as_slice() else {
        anyhow::bail!("SubjectPublicKeyInfo: {} elements, expected 2", parts.len());
    };
    let Some(algorithm) = algorithm_of(alg_id)? else {
        return Ok(None);
    };
    if key.tag != BIT_STRING || key.contents.first() != Some(&0) {
        anyhow::bail!(
            "SubjectPublicKeyInfo of {}: not a whole-byte BIT STRING",
            name(&algorithm)
        );
    }
    Ok(Some((algorithm, key.contents[1..].to_vec())))
}

/// A PKCS#8 PrivateKeyInfo's algorithm (as `algorithm_of` reads its AlgorithmIdentifier;
/// None for another table's) and private key (its OCTET STRING's contents); `name` names
/// an algorithm in errors.
pub fn read_pkcs8<T>(
    der_bytes: &[u8],
    algorithm_of: impl Fn(&Element<'_>) -> Result<Option<T>>,
    name: impl Fn(&T) -> &str,
) -> Result<Option<(T, &[u8])>> {
    let outer = expect(der_bytes, SEQUENCE, "PrivateKeyInfo")?;
    let parts = elements(outer.contents)?;
    let (Some(alg_id), Some(private)) = (parts.get(1), parts.get(2)) else {
        anyhow::bail!(
            "PrivateKeyInfo: {} elements, expected at least 3",
            parts.len()
        );
    };
    let Some(algorithm) = algorithm_of(alg_id)? else {
        return Ok(None);
    };
    if private.tag != OCTET_STRING {
        anyhow::bail!(
            "PrivateKeyInfo of {}: privateKey is not an OCTET STRING",
            name(&algorithm)
        );
    }
    Ok(Some((algorithm, private.contents)))
}

/// The OID of an AlgorithmIdentifier element, dotted.
pub fn algorithm_oid(alg_id: &Element<'_>) -> Result<String> {
    let inner = elements(alg_id.contents)?;
    let Some(oid) = inner.first().filter(|e| e.tag == OID) else {
        anyhow::bail!("AlgorithmIdentifier without an OID");
    };
    Ok(oid_text(oid.contents))
}

/// A non-negative INTEGER.
pub fn integer(value: u64) -> Vec<u8> {
    let bytes = value.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count().min(7);
    let mut contents = bytes[skip..].to_vec();
    if contents[0] & 0x80 != 0 {
        contents.insert(0, 0);
    }
    tlv(INTEGER, &contents)
}

/// The contents of an INTEGER as a u64 (a negative or larger value is an error).
pub fn integer_value(e: &Element<'_>) -> Result<u64> {
    let c = e.contents;
    if e.tag != INTEGER || c.is_empty() || c[0] & 0x80 != 0 {
        bail!("DER: not a non-negative INTEGER");
    }
    let c = if c[0] == 0 { &c[1..] } else { c };
    if c.len() > 8 {
        bail!("DER: an INTEGER wider than 64 bits");
    }
    Ok(c.iter().fold(0u64, |a, &b| (a << 8) | b as u64))
}

/// An OBJECT IDENTIFIER's contents from its dotted form.
pub fn oid_contents(dotted: &str) -> Result<Vec<u8>> {
    let arcs = dotted
        .split('.')
        .map(|a| a.parse::<u64>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| anyhow::anyhow!("{dotted:?} is not a dotted OID"))?;
    if arcs.len() < 2 || arcs[0] > 2 {
        bail!("{dotted:?} is not a dotted OID");
    }
    let mut out = Vec::new();
    base128(arcs[0] * 40 + arcs[1], &mut out);
    for &arc in &arcs[2..] {
        base128(arc, &mut out);
    }
    Ok(out)
}

/// An OBJECT IDENTIFIER element.
pub fn oid(dotted: &str) -> Result<Vec<u8>> {
    Ok(tlv(OID, &oid_contents(dotted)?))
}

/// The components of a relative OID (`32473.1`) in base-128, as a trust anchor ID's binary
/// representation is.
pub fn relative_oid(dotted: &str) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for arc in dotted.split('.') {
        let arc: u64 = arc.parse().map_err(|_| {
            anyhow::anyhow!("{dotted:?} is not a trust anchor ID (dotted decimals)")
        })?;
        base128(arc, &mut out);
    }
    Ok(out)
}

/// The dotted form of a relative OID's contents (`81 fd 59 01` -> `32473.1`); None if the
/// bytes are not whole base-128 components without leading 0x80 padding.
pub fn relative_oid_text(contents: &[u8]) -> Option<String> {
    let mut arcs = Vec::new();
    let mut value: u64 = 0;
    let mut fresh = true;
    for &b in contents {
        if fresh && b == 0x80 {
            return None;
        }
        value = value.checked_mul(128)? | u64::from(b & 0x7f);
        fresh = b & 0x80 == 0;
        if fresh {
            arcs.push(value.to_string());
            value = 0;
        }
    }
    (fresh && !arcs.is_empty()).then(|| arcs.join("."))
}

/// The dotted form of an OBJECT IDENTIFIER's contents (its first byte holds the first two
/// arcs: `2b 06 01` -> `1.3.6.1`); the empty string for contents that are not an OID.
pub fn oid_text(contents: &[u8]) -> String {
    let Some(relative) = relative_oid_text(contents) else {
        return String::new();
    };
    let mut arcs = relative.split('.');
    let Some(first) = arcs.next().and_then(|a| a.parse::<u64>().ok()) else {
        return String::new();
    };
    let head = (first / 40).min(2);
    [head.to_string(), (first - head * 40).to_string()]
        .into_iter()
        .chain(arcs.map(str::to_owned))
        .collect::<Vec<_>>()
        .join(".")
}

fn base128(mut v: u64, out: &mut Vec<u8>) {
    let mut tmp = vec![(v & 0x7f) as u8];
    v >>= 7;
    while v > 0 {
        tmp.push(0x80 | (v & 0x7f) as u8);
        v >>= 7;
    }
    out.extend(tmp.iter().rev());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oid_reads_back_dotted() {
        for dotted in [
            "1.3.6.1.4.1.44363.47.0",
            "2.16.840.1.101.3.4.3.18",
            "1.2.840.10045.4.3.2",
        ] {
            assert_eq!(oid_text(&oid(dotted).unwrap()[2..]), dotted);
        }
        assert_eq!(oid_text(&[0x80]), "");
    }

    #[test]
    fn round_trips_and_known_encodings() {
        assert_eq!(integer(0), [2, 1, 0]);
        assert_eq!(integer(128), [2, 2, 0, 128]);
        assert_eq!(integer((1 << 48) | 5), [2, 7, 1, 0, 0, 0, 0, 0, 5]);
        let max = integer(u64::MAX);
        let e = read(&max).unwrap().0;
        assert_eq!(integer_value(&e).unwrap(), u64::MAX);
        // The draft's example: CA ID 32473.1 as a RELATIVE-OID is 81 fd 59 01.
        assert_eq!(relative_oid("32473.1").unwrap(), [0x81, 0xfd, 0x59, 0x01]);
        assert_eq!(
            relative_oid_text(&[0x81, 0xfd, 0x59, 0x01]).as_deref(),
            Some("32473.1")
        );
        assert_eq!(
            relative_oid_text(&[0x81, 0xfd]),
            None,
            "a component cut short"
        );
        assert_eq!(relative_oid_text(&[0x80, 0x01]), None, "leading padding");
        assert_eq!(relative_oid_text(&[]), None);
        assert_eq!(oid("2.5.29.17").unwrap(), [6, 3, 0x55, 0x1d, 0x11]);
        let long = tlv(OCTET_STRING, &[7; 300]);
        assert_eq!(&long[..4], &[4, 0x82, 1, 44]);
        let (e, rest) = read(&long).unwrap();
        assert_eq!((e.contents.len(), rest.len()), (300, 0));
        assert!(read(&long[..100]).is_err());
    }
}
