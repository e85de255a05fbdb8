//! A document printed on standard output (`info`, `pki`'s summary), ending quietly when the
//! reader has gone: `chainlab-engine info | head` is a normal use, not an error, so a closed
//! pipe ends the write without a panic (which `println!` raises) and without an error line.

use std::io::{ErrorKind, Write};

/// Writes `text` and a newline to standard output and flushes it; a reader that closed the
/// pipe ends the write quietly (Ok). Any other write error is returned.
pub fn print_line(text: &str) -> std::io::Result<()> {
    write_line(&mut std::io::stdout().lock(), text)
}

/// `print_line` on any writer (testable without a process).
pub fn write_line(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    match out
        .write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
    {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// `text` as one line of an error message: control characters (a line break, a carriage
/// return, an escape a user's value may hold) and the Unicode line and paragraph separators
/// escaped, so a message is one line whatever value it quotes.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The names an error lists as allowed, each once, in their first order (two signature
/// algorithms of one scheme, RSA-2048 and RSA-3072, had listed `rsa_pss_rsae_sha256` twice).
pub fn allowed<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for name in names {
        if !seen.contains(&name) {
            seen.push(name);
        }
    }
    seen.join(", ")
}

/// Each name of a colon-separated list given to a stack's option (`--groups`, `--sigalgs`),
/// in order, as `lookup` finds it (the stack's table); an unknown name is an error naming
/// the option, the list, the name, what it should have been (`what`: "group", "scheme") of
/// which stack, and the `allowed` names.
pub fn each_named<'a, T>(
    flag: &str,
    list: &str,
    what: &str,
    stack: &str,
    lookup: impl Fn(&str) -> Option<T>,
    allowed_names: impl IntoIterator<Item = &'a str>,
) -> anyhow::Result<Vec<T>> {
    let mut out = Vec::new();
    for name in list.split(':').map(str::trim) {
        match lookup(name) {
            Some(found) => out.push(found),
            None => anyhow::bail!(
                "{flag} {list:?}: {name:?} is not a {what} of the {stack} stack; allowed: {}",
                allowed(allowed_names)
            ),
        }
    }
    Ok(out)
}

/// The entries of a `--groups` list in a stack's table of groups, each entry known by
/// several names (`names`: the first is the one an error lists, matched without regard to
/// case); `value` is the stack's handle of an entry.
pub fn each_group<G, T>(
    list: &str,
    stack: &str,
    table: &'static [G],
    names: impl Fn(&G) -> &'static [&'static str],
    value: impl Fn(&G) -> T,
) -> anyhow::Result<Vec<T>> {
    let lookup = |name: &str| {
        table
            .iter()
            .find(|g| names(g).iter().any(|n| n.eq_ignore_ascii_case(name)))
            .map(&value)
    };
    let first_names = table.iter().map(|g| names(g)[0]);
    each_named("--groups", list, "group", stack, lookup, first_names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_looked_up_name_by_name_and_an_unknown_one_named() {
        let table = [("X25519", 29u16), ("P-256", 23)];
        let lookup = |n: &str| {
            table
                .iter()
                .find(|(t, _)| t.eq_ignore_ascii_case(n))
                .map(|e| e.1)
        };
        let names = || table.iter().map(|e| e.0);
        let got = each_named(
            "--groups",
            "x25519: P-256",
            "group",
            "test",
            lookup,
            names(),
        );
        assert_eq!(got.unwrap(), [29, 23]);
        let err = each_named("--groups", "X25519:X448", "group", "test", lookup, names());
        assert_eq!(
            err.unwrap_err().to_string(),
            "--groups \"X25519:X448\": \"X448\" is not a group of the test stack; allowed: \
             X25519, P-256"
        );
    }

    #[test]
    fn allowed_names_each_once_in_their_first_order() {
        assert_eq!(allowed(["b", "a", "b", "c", "a"]), "b, a, c");
        assert_eq!(allowed([]), "");
    }

    #[test]
    fn one_line_escapes_what_would_break_or_hide_a_line() {
        assert_eq!(
            one_line("a\nb\rc\u{1b}d\u{2028}é"),
            "a\\nb\\rc\\u{1b}d\\u{2028}é"
        );
        assert_eq!(one_line("plain --groups \"X\""), "plain --groups \"X\"");
    }

    /// A reader that took `room` bytes, then closed its end.
    struct ClosedAfter {
        room: usize,
        got: Vec<u8>,
    }

    impl Write for ClosedAfter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.got.len() >= self.room {
                return Err(std::io::Error::from(ErrorKind::BrokenPipe));
            }
            let n = buf.len().min(self.room - self.got.len());
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_ends_quietly_and_other_errors_are_returned() {
        let mut out = ClosedAfter {
            room: 3,
            got: Vec::new(),
        };
        assert!(write_line(&mut out, "{\n  \"a\": 1\n}").is_ok());
        assert_eq!(out.got, b"{\n ");

        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::from(ErrorKind::StorageFull))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let err = write_line(&mut Full, "x").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::StorageFull);
    }

    #[test]
    fn a_group_is_found_by_any_of_its_names_and_refused_by_its_first() {
        static TABLE: [(&[&str], u16); 2] = [
            (&["X25519MLKEM768", "x25519_mlkem768"], 4588),
            (&["P-256", "prime256v1"], 23),
        ];
        let found = each_group(
            "prime256v1:X25519MLKEM768",
            "test",
            &TABLE,
            |g| g.0,
            |g| g.1,
        );
        assert_eq!(found.expect("known"), vec![23, 4588]);
        let e = each_group("P-384", "test", &TABLE, |g| g.0, |g| g.1).expect_err("unknown");
        assert_eq!(
            e.to_string(),
            "--groups \"P-384\": \"P-384\" is not a group of the test stack; allowed: \
             X25519MLKEM768, P-256"
        );
    }
}
