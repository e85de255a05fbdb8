//! A certificate's place in a hierarchy, from root to leaf.

use serde::Serialize;

use crate::cli::Purpose;

/// A certificate's place in the hierarchy; the name is also the file stem and the seed
/// derivation label, so a role keeps its key across depths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Root,
    Int1,
    Int2,
    Leaf,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Root, Role::Int1, Role::Int2, Role::Leaf];

    pub fn name(self) -> &'static str {
        match self {
            Role::Root => "root",
            Role::Int1 => "int1",
            Role::Int2 => "int2",
            Role::Leaf => "leaf",
        }
    }

    /// Start of the subject's common name; the algorithm follows in parentheses. A client
    /// hierarchy's names say "client", so its root is never mistaken for a server's.
    pub(super) fn title(self, purpose: Purpose) -> &'static str {
        match (purpose, self) {
            (Purpose::Server, Role::Root) => "chainlab root",
            (Purpose::Server, Role::Int1) => "chainlab intermediate 1",
            (Purpose::Server, Role::Int2) => "chainlab intermediate 2",
            (Purpose::Server, Role::Leaf) => "chainlab leaf",
            (Purpose::Client, Role::Root) => "chainlab client root",
            (Purpose::Client, Role::Int1) => "chainlab client intermediate 1",
            (Purpose::Client, Role::Int2) => "chainlab client intermediate 2",
            (Purpose::Client, Role::Leaf) => "chainlab client leaf",
        }
    }

    pub fn cert_file(self) -> String {
        format!("{}.pem", self.name())
    }

    pub fn key_file(self) -> String {
        format!("{}.key", self.name())
    }
}

/// Roles from root to leaf for a depth of 1 to `MAX_DEPTH`.
pub fn roles(depth: usize) -> &'static [Role] {
    match depth {
        1 => &[Role::Leaf],
        2 => &[Role::Root, Role::Leaf],
        3 => &[Role::Root, Role::Int1, Role::Leaf],
        _ => &Role::ALL,
    }
}
