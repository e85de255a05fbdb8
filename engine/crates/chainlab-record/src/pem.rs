//! PEM files named on the command line, read the same way whatever library parses them:
//! a file that cannot be read, does not parse, or holds no certificate is one line naming
//! the option and the file.

use std::path::Path;

use anyhow::{anyhow, bail, Context as _, Result};

/// Every PEM certificate of the file at `path`, as `parse` (the stack's own
/// `X509::stack_from_pem`) reads them; `flag` names the option in errors.
pub fn read_certificates<C, E: std::fmt::Display>(
    path: &Path,
    flag: &str,
    parse: impl FnOnce(&[u8]) -> std::result::Result<Vec<C>, E>,
) -> Result<Vec<C>> {
    let pem =
        std::fs::read(path).with_context(|| format!("{flag}: cannot read {}", path.display()))?;
    let certs = parse(&pem).map_err(|e| {
        anyhow!(
            "{flag}: {} is not a PEM certificate file: {e}",
            path.display()
        )
    })?;
    if certs.is_empty() {
        bail!("{flag}: {} holds no PEM certificate", path.display());
    }
    Ok(certs)
}

/// `--untrusted`'s certificates, which help path building without being trusted: every
/// certificate of the file (read as `read_certificates` reads it), a self-signed one
/// (`self_signed`: the stack's own check) refused, since a trust anchor belongs in `--ca`.
pub fn untrusted_certificates<C, E: std::fmt::Display>(
    path: &Path,
    parse: impl FnOnce(&[u8]) -> std::result::Result<Vec<C>, E>,
    self_signed: impl Fn(&C) -> bool,
) -> Result<Vec<C>> {
    let certs = read_certificates(path, "--untrusted", parse)?;
    if let Some(i) = certs.iter().position(self_signed) {
        bail!(
            "--untrusted {}: certificate {} is self-signed; trust anchors go in --ca",
            path.display(),
            i + 1
        );
    }
    Ok(certs)
}

/// A libssl stack's verification setup over the rust-openssl family's types (openssl's and
/// boring's, one fork apart), as two functions: `install_untrusted(builder, path)` for
/// `--untrusted` and `require_client_certificates(builder, path)` for `--client-ca`.
/// `$builder`, `$stack`, `$x509`, `$store` and `$mode` are the crate's `SslContextBuilder`,
/// `Stack`, `X509`, `X509StoreBuilder` and `SslVerifyMode`; `$read` reads a PEM certificate
/// file (`fn(&Path, flag) -> Result<Vec<X509>>`); `$self_signed` is its self-signed check
/// (`fn(&X509) -> bool`: the APIs differ); `$set_callback` its
/// `SSL_CTX_set_cert_verify_callback` and `$callback` the stack's own verification callback,
/// which reads the `--untrusted` certificates as a `'static` stack through its argument.
#[macro_export]
macro_rules! libssl_verification {
    (
        $builder:ty,
        $stack:ident,
        $x509:ty,
        $store:ty,
        $mode:ident,
        $read:path,
        $self_signed:expr,
        $set_callback:path,
        $callback:path
    ) => {
        /// Mutual TLS on the server: ask every client for a certificate, refuse a client
        /// without one, and verify the client's chain against `path`'s certificates only.
        fn require_client_certificates(
            builder: &mut $builder,
            path: &std::path::Path,
        ) -> anyhow::Result<$crate::serve::ClientAuth> {
            let mut store = <$store>::new()?;
            let anchors = $read(path, "--client-ca")?;
            for cert in &anchors {
                store.add_cert(cert.clone())?;
            }
            builder.set_verify_cert_store(store.build())?;
            builder.set_verify($mode::PEER | $mode::FAIL_IF_NO_PEER_CERT);
            Ok($crate::serve::ClientAuth::required(anchors.len()))
        }

        /// Certificates that help path building without being trusted (`--untrusted`,
        /// `pem::untrusted_certificates`): handed to `X509_verify_cert` alongside the chain
        /// the peer sent, exactly like the peer's own intermediates.
        fn install_untrusted(builder: &mut $builder, path: &std::path::Path) -> anyhow::Result<()> {
            let mut extra = $stack::new()?;
            let self_signed: fn(&$x509) -> bool = $self_signed;
            for cert in
                $crate::pem::untrusted_certificates(path, <$x509>::stack_from_pem, self_signed)?
            {
                extra.push(cert)?;
            }
            // The context lives until the process exits and the callback reads this stack on
            // every handshake, so it is leaked on purpose (one allocation per process).
            let extra: &'static mut $stack<$x509> = Box::leak(Box::new(extra));
            // SAFETY: valid context; the argument is a 'static stack only ever read.
            unsafe {
                $set_callback(
                    builder.as_ptr(),
                    Some($callback),
                    (extra as *mut $stack<$x509>).cast(),
                )
            };
            Ok(())
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[u8]) -> std::result::Result<Vec<String>, String> {
        let text = std::str::from_utf8(text).map_err(|e| e.to_string())?;
        if text.starts_with("bad") {
            return Err("no PEM here".into());
        }
        Ok(text.lines().map(str::to_owned).collect())
    }

    #[test]
    fn each_way_a_file_fails_names_the_option_and_the_file() {
        let dir = std::env::temp_dir().join(format!("chainlab-pem-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (good, bad, empty) = (dir.join("good"), dir.join("bad"), dir.join("empty"));
        std::fs::write(&good, "a\nb").unwrap();
        std::fs::write(&bad, "bad").unwrap();
        std::fs::write(&empty, "").unwrap();
        assert_eq!(read_certificates(&good, "--ca", lines).unwrap(), ["a", "b"]);
        let said = |p: &Path| read_certificates(p, "--ca", lines).unwrap_err().to_string();
        assert!(
            said(&bad).starts_with("--ca: ")
                && said(&bad).ends_with("is not a PEM certificate file: no PEM here")
        );
        assert!(said(&empty).ends_with("holds no PEM certificate"));
        assert!(said(&dir.join("missing")).contains("--ca: cannot read"));
        // `--untrusted`: the stack's self-signed check refuses the file, naming the first.
        let untrusted = untrusted_certificates(&good, lines, |c| c == "b");
        let said = untrusted.unwrap_err().to_string();
        assert!(
            said.starts_with("--untrusted ")
                && said.ends_with("certificate 2 is self-signed; trust anchors go in --ca")
        );
        assert_eq!(
            untrusted_certificates(&good, lines, |_| false).unwrap(),
            ["a", "b"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
