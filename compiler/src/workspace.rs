//! The workspace store a command works on (API keys, sealed secrets, assets) and the key
//! that seals its secrets: where they are and how they are opened, for the commands that
//! name them with flags (`cli/store.rs`) and for the Builder.

use std::path::PathBuf;
use std::sync::Arc;
use svc_runtime::seal::{KeySource, SecretsKey};
use svc_runtime::store::{Location, WorkspaceStore};

/// A workspace store and where its secrets key comes from.
#[derive(Clone, Debug)]
pub struct Workspace {
    pub location: Location,
    /// A file holding the secrets key; else `SVC_SECRETS_KEY_FILE`, `SVC_SECRETS_KEY`, or
    /// `secrets.key` beside an SQLite store.
    pub key_file: Option<PathBuf>,
}

impl Workspace {
    /// The store, for messages (a URL without its password).
    pub fn describe(&self) -> String {
        self.location.to_string()
    }

    /// The store, for a command that only reads it: an SQLite store that does not exist is
    /// not created (a command run in the wrong directory would leave an empty
    /// `.svc/workspace.db` there); `None` then, with the reason for the caller to say.
    pub fn open_existing(&self) -> Result<Result<Arc<dyn WorkspaceStore>, String>, String> {
        if let Location::Sqlite(path) = &self.location
            && !path.exists()
        {
            return Ok(Err(format!(
                "there is no workspace store at `{}`: run svc in the project's directory, or name the store with --store",
                path.display()
            )));
        }
        self.open().map(Ok)
    }

    pub fn open(&self) -> Result<Arc<dyn WorkspaceStore>, String> {
        let store = self.location.open().map_err(|e| e.to_string())?;
        for warning in store.warnings() {
            eprintln!("warning: {warning}");
        }
        Ok(store)
    }

    /// The secrets key. With `create`, an SQLite store without one gets a new key file
    /// beside it (a shared store never does: every server must be given the same key).
    pub fn secrets_key(&self, create: bool) -> Result<Option<(SecretsKey, KeySource)>, String> {
        let default_file = self.location.default_key_file();
        if let Some(found) = KeySource::resolve(self.key_file.as_deref(), default_file.as_deref())? {
            return Ok(Some(found));
        }
        match default_file {
            Some(path) if create => {
                let key = svc_runtime::seal::create_key_file(&path)?;
                eprintln!(
                    "Created the secrets key {} (id {}): secret values are sealed with it. Keep it out of version control, and back it up: without it the values cannot be read.",
                    path.display(),
                    key.id_hex()
                );
                Ok(Some((key, KeySource::Default(path))))
            }
            _ => Ok(None),
        }
    }

    /// [`Workspace::secrets_key`], required: a clear error when there is none.
    pub fn require_secrets_key(&self, create: bool) -> Result<(SecretsKey, KeySource), String> {
        self.secrets_key(create)?.ok_or_else(|| {
            format!(
                "no secrets key for {}: a shared store needs the same key on every server and here. Make one with `svc secrets keygen > secrets.key`, then pass --secrets-key-file secrets.key (or set SVC_SECRETS_KEY_FILE)",
                self.describe()
            )
        })
    }
}

/// `2026-11-21 00:31 UTC` for Unix seconds.
pub fn format_time(ts: i64) -> String {
    let days = ts.div_euclid(86_400);
    let secs = ts.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", secs / 3600, (secs % 3600) / 60)
}

/// `30d`, `12h`, `90m`, `45s`.
pub fn parse_duration(text: &str) -> Result<i64, String> {
    if let Some(secs) = svc_frontend::flow::parse_window(text) {
        return i64::try_from(secs).map_err(|_| format!("`{text}` is too long a duration"));
    }
    let digits = text.trim().trim_end_matches(|c: char| c.is_ascii_alphabetic());
    if !digits.is_empty() && digits.bytes().all(|b| b == b'0') {
        return Err(format!(
            "`{text}` is zero: write a duration of at least one second, for example `30d`, `12h`, `90m`"
        ));
    }
    Err(format!(
        "`{text}` is not a duration: write a number and a unit (`s`, `m`, `h`, `d`), for example `30d`, `12h`, `90m`"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(format_time(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_time(1_795_000_000), "2026-11-18 11:06 UTC");
        // A leap day.
        assert_eq!(format_time(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(parse_duration("30d").unwrap(), 30 * 86_400);
        assert!(parse_duration("soon").unwrap_err().contains("not a duration"));
        assert!(parse_duration("1").unwrap_err().contains("a number and a unit"));
        assert!(parse_duration("0d").unwrap_err().contains("is zero"));
    }
}
