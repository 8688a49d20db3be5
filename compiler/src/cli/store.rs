//! The workspace store from the command line: `--store`, `SVC_STORE`, or
//! `.svc/workspace.db`; and the secrets key: `--secrets-key-file`,
//! `SVC_SECRETS_KEY_FILE`, `SVC_SECRETS_KEY`, or `secrets.key` beside an SQLite store.

use std::path::PathBuf;
use std::sync::Arc;
use svc_runtime::seal::{KeySource, SecretsKey};
use svc_runtime::store::{DEFAULT_PATH, Location, STORE_ENV, WorkspaceStore};

#[derive(clap::Args, Clone)]
pub struct StoreArgs {
    /// The workspace store: an SQLite file, or a postgres:// URL shared by every server.
    /// Default: $SVC_STORE, else .svc/workspace.db.
    #[arg(long, global = true, value_name = "PATH|URL", env = STORE_ENV)]
    pub store: Option<String>,
    /// A file holding the secrets key (base64). Default: $SVC_SECRETS_KEY_FILE, then
    /// $SVC_SECRETS_KEY, then secrets.key beside an SQLite store.
    #[arg(long, global = true, value_name = "PATH", env = svc_runtime::seal::KEY_FILE_ENV)]
    pub secrets_key_file: Option<PathBuf>,
}

impl StoreArgs {
    pub fn location(&self) -> Location {
        self.store
            .as_deref()
            .map(Location::parse)
            .unwrap_or_else(|| Location::parse(DEFAULT_PATH))
    }

    /// The store, for messages (a URL without its password).
    pub fn describe(&self) -> String {
        self.location().to_string()
    }

    /// The store of the project in `dir` when no store is named (`--store`, `SVC_STORE`):
    /// `svc secrets list --project DIR` reads DIR's store, not the current directory's.
    pub fn for_project(mut self, dir: &std::path::Path) -> StoreArgs {
        if self.store.is_none() {
            self.store = Some(dir.join(DEFAULT_PATH).to_string_lossy().into_owned());
        }
        self
    }

    /// The store, for a command that only reads it: an SQLite store that does not exist is
    /// not created (a command run in the wrong directory would leave an empty
    /// `.svc/workspace.db` there); `None` then, with the reason for the caller to say.
    pub fn open_existing(&self) -> Result<Result<Arc<dyn WorkspaceStore>, String>, String> {
        if let Location::Sqlite(path) = self.location()
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
        let store = self.location().open().map_err(|e| e.to_string())?;
        for warning in store.warnings() {
            eprintln!("warning: {warning}");
        }
        Ok(store)
    }

    /// The secrets key. With `create`, an SQLite store without one gets a new key file
    /// beside it (a shared store never does: every server must be given the same key).
    pub fn secrets_key(&self, create: bool) -> Result<Option<(SecretsKey, KeySource)>, String> {
        let location = self.location();
        let default_file = location.default_key_file();
        if let Some(found) = KeySource::resolve(self.secrets_key_file.as_deref(), default_file.as_deref())? {
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

    /// [`StoreArgs::secrets_key`], required: a clear error when there is none.
    pub fn require_secrets_key(&self, create: bool) -> Result<(SecretsKey, KeySource), String> {
        self.secrets_key(create)?.ok_or_else(|| {
            format!(
                "no secrets key for {}: a shared store needs the same key on every server and here. Make one with `svc secrets keygen > secrets.key`, then pass --secrets-key-file secrets.key (or set SVC_SECRETS_KEY_FILE)",
                self.describe()
            )
        })
    }
}

/// `svc store copy`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Copy a workspace (keys, sealed secrets, assets) into an empty store.
    #[command(
        after_help = "Example:\n  svc store copy --from .svc/workspace.db --to postgres://svc@db.internal/svc\n\nSecret values are copied sealed: give the servers the key they were sealed with\n(for an SQLite store, .svc/secrets.key unless you chose another)."
    )]
    Copy {
        /// The store to copy from (an SQLite file or a postgres:// URL).
        #[arg(long, value_name = "PATH|URL")]
        from: String,
        /// The store to copy into, which must hold no keys and no secrets.
        #[arg(long, value_name = "PATH|URL")]
        to: String,
    },
}

pub fn run(args: Args) -> i32 {
    let Command::Copy { from, to } = args.command;
    let result = (|| -> Result<(), String> {
        let (from, to) = (Location::parse(&from), Location::parse(&to));
        if from == to {
            return Err("--from and --to are the same store".into());
        }
        if let Location::Sqlite(path) = &from
            && !path.exists()
        {
            return Err(format!("there is no store at `{}`", path.display()));
        }
        let source = from.open().map_err(|e| e.to_string())?;
        let target = to.open().map_err(|e| e.to_string())?;
        let copied = svc_runtime::store::copy::copy(source.as_ref(), target.as_ref(), svc_runtime::apikey::unix_now())
            .map_err(|e| e.to_string())?;
        eprintln!(
            "Copied {} keys, {} secrets (sealed) and {} assets from {from} to {to}.",
            copied.keys, copied.secrets, copied.assets
        );
        if let (Some(key_file), Location::Postgres(_)) = (from.default_key_file(), &to)
            && key_file.exists()
            && copied.secrets > 0
        {
            eprintln!(
                "The secrets are sealed with {}: give every server that key (--secrets-key-file or SVC_SECRETS_KEY_FILE).",
                key_file.display()
            );
        }
        Ok(())
    })();
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
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
