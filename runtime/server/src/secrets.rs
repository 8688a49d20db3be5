//! Secret values for `ctx.secret(name)`.
//!
//! - Development (`svc dev`, `serve --dev`): the environment variable of the same name.
//! - Deployed: the workspace store (`svc secrets set`).
//!
//! Values are read once at start-up; a server that lacks a required secret refuses to
//! start and names what is missing (never a value). The [`Redactor`] built from the values
//! scrubs them from node logs and panic messages, so a node cannot leak a secret into a
//! log line by printing it.

use crate::store::WorkspaceStore;
use std::collections::BTreeMap;
use svc_sdk::Secret;

/// A secret the project declares.
#[derive(Debug, Clone, Copy)]
pub struct Requirement {
    pub name: &'static str,
    pub required: bool,
}

/// Where secret values come from.
pub enum SecretSource<'a> {
    /// The process environment (development).
    Environment,
    /// The workspace store (deployed).
    Store(&'a dyn WorkspaceStore),
}

/// The secrets a server runs with.
#[derive(Clone, Default)]
pub struct Secrets {
    values: BTreeMap<&'static str, Secret>,
}

/// Secrets that are required and have no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingSecrets(pub Vec<&'static str>);

impl std::fmt::Display for MissingSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "required secrets have no value: {}", self.0.join(", "))
    }
}

impl Secrets {
    /// Loads every declared secret; fails listing the required ones that are missing.
    pub fn load(requirements: &[Requirement], source: SecretSource<'_>) -> Result<Secrets, LoadError> {
        let mut values = BTreeMap::new();
        let mut missing = Vec::new();
        for r in requirements {
            let value = match &source {
                SecretSource::Environment => std::env::var(r.name).ok(),
                SecretSource::Store(store) => store.secret(r.name).map_err(|e| LoadError::Store(e.to_string()))?,
            };
            match value {
                Some(v) if !v.is_empty() => {
                    values.insert(r.name, Secret::new(v));
                }
                _ if r.required => missing.push(r.name),
                _ => {}
            }
        }
        if missing.is_empty() {
            Ok(Secrets { values })
        } else {
            Err(LoadError::Missing(MissingSecrets(missing)))
        }
    }

    /// Secrets given directly (tests).
    pub fn from_values(values: impl IntoIterator<Item = (&'static str, String)>) -> Self {
        Secrets {
            values: values.into_iter().map(|(k, v)| (k, Secret::new(v))).collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<Secret> {
        self.values.get(name).cloned()
    }

    pub fn redactor(&self) -> Redactor {
        Redactor::new(self.values.values().map(|s| s.expose().to_string()))
    }
}

/// Why secrets could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    Missing(MissingSecrets),
    Store(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Missing(m) => m.fmt(f),
            LoadError::Store(e) => write!(f, "cannot read secrets: {e}"),
        }
    }
}

/// Replaces known secret values in text with `[redacted]`.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Longest first, so that a secret containing another is replaced whole.
    values: Vec<String>,
}

impl Redactor {
    /// Values shorter than 4 characters are not scrubbed: they would mangle ordinary text.
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut values: Vec<String> = values.into_iter().filter(|v| v.len() >= 4).collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Redactor { values }
    }

    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), "[redacted]");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SqliteStore;

    const REQ: &[Requirement] = &[
        Requirement {
            name: "SVC_TEST_A",
            required: true,
        },
        Requirement {
            name: "SVC_TEST_B",
            required: false,
        },
    ];

    #[test]
    fn a_missing_required_secret_is_named_not_shown() {
        let store = SqliteStore::in_memory().unwrap();
        let err = Secrets::load(REQ, SecretSource::Store(&store)).err().unwrap();
        assert_eq!(err.to_string(), "required secrets have no value: SVC_TEST_A");
        store.set_secret("SVC_TEST_A", "value-a", 1).unwrap();
        let s = Secrets::load(REQ, SecretSource::Store(&store)).unwrap();
        assert_eq!(s.get("SVC_TEST_A").unwrap().expose(), "value-a");
        assert!(s.get("SVC_TEST_B").is_none());
    }

    #[test]
    fn redaction() {
        let r = Redactor::new(["s3cr3t-value".to_string(), "abc".to_string(), "s3cr3t".to_string()]);
        assert_eq!(
            r.redact("token=s3cr3t-value and s3cr3t, abc"),
            "token=[redacted] and [redacted], abc"
        );
    }
}
