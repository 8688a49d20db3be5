//! The workspace store from the command line: `--store`, `SVC_STORE`, or `.svc/workspace.db`.

use std::path::PathBuf;
use svc_runtime::store::{DEFAULT_PATH, STORE_ENV, SqliteStore};

#[derive(clap::Args, Clone)]
pub struct StoreArgs {
    /// The workspace store (an SQLite file). Default: $SVC_STORE, else .svc/workspace.db.
    #[arg(long, global = true, value_name = "PATH", env = STORE_ENV)]
    pub store: Option<PathBuf>,
}

impl StoreArgs {
    pub fn path(&self) -> PathBuf {
        self.store.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_PATH))
    }

    pub fn open(&self) -> Result<SqliteStore, String> {
        SqliteStore::open(&self.path()).map_err(|e| e.to_string())
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
    svc_frontend::flow::parse_window(text)
        .map(|s| s as i64)
        .ok_or_else(|| format!("`{text}` is not a duration; write for example `30d`, `12h`, `90m`"))
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
        assert!(parse_duration("soon").is_err());
    }
}
