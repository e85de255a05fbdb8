//! Files tests copy and edit: directories copied whole, and PEM (RFC 7468) certificates
//! read to DER and written back, with no TLS library (each engine's tests link their own).

use std::path::Path;

/// Copies `from` into `to` (created), recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The DER of the first PEM block of `file`.
pub fn pem_der(file: &Path) -> Vec<u8> {
    let text = std::fs::read_to_string(file).unwrap();
    let body: String = text
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in body.bytes().filter(|&c| c != b'=') {
        let v = ALPHABET
            .iter()
            .position(|&a| a == c)
            .unwrap_or_else(|| panic!("{}: not base64: {:?}", file.display(), c as char));
        acc = acc << 6 | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// PEM armour (RFC 7468) over standard base64, 64 characters a line.
pub fn pem(label: &str, der: &[u8]) -> String {
    let mut b64 = String::new();
    for chunk in der.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |a, (i, &b)| a | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                b64.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                b64.push('=');
            }
        }
    }
    let lines: Vec<&str> = b64
        .as_bytes()
        .chunks(64)
        .map(|l| std::str::from_utf8(l).unwrap())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_round_trips_every_length() {
        let dir = std::env::temp_dir().join(format!("chainlab-pem-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for n in [1usize, 2, 3, 4, 47, 48, 49, 300] {
            let der: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
            let file = dir.join(format!("{n}.pem"));
            std::fs::write(&file, pem("CERTIFICATE", &der)).unwrap();
            assert_eq!(pem_der(&file), der, "{n} bytes");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
