//! The workspace store from the command line: `--store`, `SVC_STORE`, or
//! `.svc/workspace.db`; and the secrets key: `--secrets-key-file`,
//! `SVC_SECRETS_KEY_FILE`, `SVC_SECRETS_KEY`, or `secrets.key` beside an SQLite store.

use crate::workspace::Workspace;
pub use crate::workspace::{format_time, parse_duration};
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
    /// The store and key these flags name, for the modules that use them.
    pub fn workspace(&self) -> Workspace {
        Workspace {
            location: self
                .store
                .as_deref()
                .map(Location::parse)
                .unwrap_or_else(|| Location::parse(DEFAULT_PATH)),
            key_file: self.secrets_key_file.clone(),
        }
    }

    pub fn location(&self) -> Location {
        self.workspace().location
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

    /// See [`Workspace::open_existing`].
    pub fn open_existing(&self) -> Result<Result<Arc<dyn WorkspaceStore>, String>, String> {
        self.workspace().open_existing()
    }

    pub fn open(&self) -> Result<Arc<dyn WorkspaceStore>, String> {
        self.workspace().open()
    }

    /// See [`Workspace::require_secrets_key`].
    pub fn require_secrets_key(&self, create: bool) -> Result<(SecretsKey, KeySource), String> {
        self.workspace().require_secrets_key(create)
    }
}

/// The arguments of a command group whose every subcommand works on the workspace store
/// (`svc keys`, `svc secrets`): the subcommand, and where the store is.
#[derive(clap::Args)]
pub struct OnStore<C: clap::Subcommand> {
    #[command(subcommand)]
    pub command: C,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `svc store copy`.
#[derive(clap::Subcommand)]
pub enum Command {
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

pub fn run(command: Command) -> i32 {
    let Command::Copy { from, to } = command;
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
