//! Tables of signature algorithms that chainlab names itself (liboqs's families, composite
//! ML-DSA): each row has a chainlab name, a dotted OID and a TLS 1.3 code point, and is
//! found by any of the three. The tables stay in their crates; the finding is here once.

use anyhow::anyhow;

/// A row of such a table.
pub trait Named: 'static {
    fn name(&self) -> &'static str;
    fn oid(&self) -> &'static str;
    fn code_point(&self) -> u16;
}

/// The row named `name` (case-insensitive, surrounding blanks ignored); else an error that
/// names the `kind` of algorithm asked for and lists the table's names.
pub fn lookup<A: Named>(table: &'static [A], kind: &str, name: &str) -> anyhow::Result<&'static A> {
    let wanted = name.trim();
    table
        .iter()
        .find(|a| a.name().eq_ignore_ascii_case(wanted))
        .ok_or_else(|| {
            let allowed: Vec<_> = table.iter().map(Named::name).collect();
            anyhow!("unknown {kind} {name:?}; allowed: {}", allowed.join(", "))
        })
}

/// The row of a dotted OID, if the table has it.
pub fn by_oid<A: Named>(table: &'static [A], oid: &str) -> Option<&'static A> {
    table.iter().find(|a| a.oid() == oid)
}

/// The row of a TLS code point, if the table has it.
pub fn by_code_point<A: Named>(table: &'static [A], code_point: u16) -> Option<&'static A> {
    table.iter().find(|a| a.code_point() == code_point)
}

/// `Named` for a table's row type (its `name`, `oid` and `code_point` fields), and the
/// table's `by_oid` and `by_code_point` in the calling module: `named_table!(Row, TABLE)`.
#[macro_export]
macro_rules! named_table {
    ($row:ty, $table:expr) => {
        impl $crate::named::Named for $row {
            fn name(&self) -> &'static str {
                self.name
            }
            fn oid(&self) -> &'static str {
                self.oid
            }
            fn code_point(&self) -> u16 {
                self.code_point
            }
        }

        /// The algorithm of a dotted OID, if it is one of the table's.
        pub fn by_oid(oid: &str) -> Option<&'static $row> {
            $crate::named::by_oid($table, oid)
        }

        /// The algorithm of a TLS code point, if it is one of the table's.
        pub fn by_code_point(code_point: u16) -> Option<&'static $row> {
            $crate::named::by_code_point($table, code_point)
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    pub struct Row {
        name: &'static str,
        oid: &'static str,
        code_point: u16,
    }

    const fn row(name: &'static str, oid: &'static str, code_point: u16) -> Row {
        Row {
            name,
            oid,
            code_point,
        }
    }

    crate::named_table!(Row, &TABLE);

    static TABLE: [Row; 2] = [
        row("Alpha-1", "1.2.3", 0xfe01),
        row("Beta-2", "1.2.4", 0xfe02),
    ];

    #[test]
    fn finds_a_row_by_name_oid_or_code_point() {
        assert_eq!(lookup(&TABLE, "thing", " alpha-1 ").unwrap().oid, "1.2.3");
        assert_eq!(by_oid("1.2.4").map(|r| r.name), Some("Beta-2"));
        assert_eq!(by_code_point(0xfe01).map(|r| r.name), Some("Alpha-1"));
        assert!(by_oid("1.2.5").is_none());
        assert!(by_code_point(0xfe03).is_none());
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_kind_and_the_allowed_names() {
        let e = lookup(&TABLE, "thing", "Gamma").unwrap_err().to_string();
        assert_eq!(e, r#"unknown thing "Gamma"; allowed: Alpha-1, Beta-2"#);
    }
}
