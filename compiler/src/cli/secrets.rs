//! `svc secrets set|list|unset|keygen|rotate-key`: secret values in the workspace store.
//!
//! Values are read from standard input or a file, never from the command line, where
//! they would end up in shell history and process listings. `list` shows names, never
//! values. Values are sealed with the secrets key before they reach the store
//! (`svc_runtime::seal`); `rotate-key` re-seals every value under a new key in one
//! transaction.

use super::keys::print_table;
use super::store::{OnStore, StoreArgs, format_time};
use clap::Subcommand;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use svc_runtime::apikey::unix_now;
use svc_runtime::store::WorkspaceStore;

pub type Args = OnStore<Command>;

#[derive(Subcommand)]
pub enum Command {
    /// Set a secret's value, read from standard input (or --from-file).
    #[command(
        after_help = "Examples:\n  printf %s \"$STRIPE_KEY\" | svc secrets set STRIPE_API_KEY\n  svc secrets set STRIPE_API_KEY --from-file ./stripe.key\n  svc secrets set STRIPE_API_KEY          # then type the value and press Ctrl-D"
    )]
    Set {
        name: String,
        /// Read the value from this file instead of standard input.
        #[arg(long, value_name = "PATH")]
        from_file: Option<PathBuf>,
    },
    /// List secret names and when they were set (never values). In a project directory,
    /// also the declared secrets that have no value.
    #[command(after_help = "Example:\n  svc secrets list --project examples/hooks")]
    List {
        /// A project whose declared secrets to compare with (default: the current directory, if it is one).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Remove a secret's value.
    #[command(after_help = "Example:\n  svc secrets unset OLD_TOKEN")]
    Unset { name: String },
    /// Print a new random secrets key (base64), for SVC_SECRETS_KEY or a key file.
    #[command(
        after_help = "Examples:\n  svc secrets keygen > secrets.key && chmod 600 secrets.key\n  export SVC_SECRETS_KEY=$(svc secrets keygen)"
    )]
    Keygen,
    /// Re-seal every secret value under a new key, in one transaction.
    #[command(
        after_help = "Example:\n  svc secrets keygen > new.key\n  svc secrets rotate-key --secrets-key-file old.key --new-key-file new.key\n\nThen give the servers the new key and restart them (they read secrets at start-up;\na server given the old key refuses to start and says so)."
    )]
    RotateKey {
        /// The file holding the new key (base64).
        #[arg(long, value_name = "PATH")]
        new_key_file: PathBuf,
    },
}

pub fn run(args: Args) -> i32 {
    match execute(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

fn read_value(from_file: Option<&PathBuf>) -> Result<String, String> {
    let raw = match from_file {
        Some(path) => std::fs::read_to_string(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?,
        None => {
            if std::io::stdin().is_terminal() {
                eprintln!("Type the value, then press Enter and Ctrl-D:");
            }
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            s
        }
    };
    // One trailing line break is how files and terminals end text, not part of the value.
    let value = raw
        .strip_suffix('\n')
        .map(|v| v.strip_suffix('\r').unwrap_or(v))
        .unwrap_or(&raw)
        .to_string();
    if value.is_empty() {
        return Err("the value is empty; nothing was set".into());
    }
    Ok(value)
}

/// The secrets a project declares (in `svc.config.yaml` or `svc.config.ts`), if `dir`
/// is a project.
fn declared(dir: &std::path::Path) -> Option<Vec<(String, bool)>> {
    let config = crate::project::Project::config_only(dir)?;
    Some(
        config
            .assets
            .secrets
            .iter()
            .map(|s| (s.name.clone(), s.required))
            .collect(),
    )
}

fn execute(args: Args) -> Result<(), String> {
    match args.command {
        Command::Keygen => {
            println!("{}", svc_runtime::seal::SecretsKey::generate().to_base64());
            return Ok(());
        }
        Command::RotateKey { new_key_file } => return rotate_key(&args.store, &new_key_file),
        _ => {}
    }
    let args = match &args.command {
        Command::List { project: Some(dir) } => Args {
            store: args.store.clone().for_project(dir),
            ..args
        },
        _ => args,
    };
    if let Command::List { project } = &args.command {
        return list(&args.store, project.clone());
    }
    let store = match &args.command {
        Command::Set { .. } => args.store.open()?,
        _ => args.store.open_existing()??,
    };
    match args.command {
        Command::Set { name, from_file } => {
            svc_types::names::check_secret_name(&name).map_err(|e| format!("{}: {}", e.message, e.hint))?;
            let value = read_value(from_file.as_ref())?;
            let (key, _) = args.store.require_secrets_key(true)?;
            prepare(store.as_ref(), &key)?;
            store
                .set_secret(&name, &key.seal(&name, &value), unix_now())
                .map_err(|e| e.to_string())?;
            eprintln!(
                "Set secret `{name}` ({} characters, sealed with key {}) in {}. Servers read secrets at start-up: restart them to use it.",
                value.chars().count(),
                key.id_hex(),
                args.store.describe()
            );
        }
        Command::List { .. } => unreachable!("listed above"),
        Command::Unset { name } => {
            if store.unset_secret(&name).map_err(|e| e.to_string())? {
                eprintln!("Removed secret `{name}`.");
            } else {
                return Err(format!("no secret `{name}` is set"));
            }
        }
        Command::Keygen | Command::RotateKey { .. } => unreachable!("handled above"),
    }
    Ok(())
}

/// `svc secrets list`: the store's secrets (never values), beside what the project in
/// `project` (default: the current directory, if it is one) declares.
fn list(store_args: &StoreArgs, project: Option<PathBuf>) -> Result<(), String> {
    // A store that does not exist holds nothing: not created by a command that only reads.
    let (set, missing_store) = match store_args.open_existing()? {
        Ok(store) => {
            // An older store's clear values are sealed the first time a key is at hand.
            if !store.plaintext_secrets().map_err(|e| e.to_string())?.is_empty() {
                let (key, _) = store_args.require_secrets_key(true)?;
                prepare(store.as_ref(), &key)?;
            }
            let mut set = store.list_secrets().map_err(|e| e.to_string())?;
            // svc's own (the shared limiter's key) are not the project's to list.
            set.retain(|s| !svc_runtime::secrets::is_internal(&s.name));
            (set, None)
        }
        Err(why) => (Vec::new(), Some(why)),
    };
    let dir = project.unwrap_or_else(|| PathBuf::from("."));
    let declared = declared(&dir).unwrap_or_default();
    let mut rows: Vec<[String; 3]> = set
        .iter()
        .map(|s| {
            let note = match declared.iter().find(|(n, _)| *n == s.name) {
                Some(_) => "set".to_string(),
                None if declared.is_empty() => "set".to_string(),
                None => "set, not declared by the project".to_string(),
            };
            [s.name.clone(), format_time(s.updated_at), note]
        })
        .collect();
    for (name, required) in &declared {
        if !set.iter().any(|s| &s.name == name) {
            rows.push([
                name.clone(),
                "-".into(),
                if *required {
                    "MISSING (required)".into()
                } else {
                    "not set (optional)".into()
                },
            ]);
        }
    }
    if rows.is_empty() {
        match missing_store {
            Some(why) => eprintln!("No secrets are set: {why}."),
            None => eprintln!(
                "No secrets in {}. Set one with `svc secrets set NAME`.",
                store_args.describe()
            ),
        }
        return Ok(());
    }
    if let Some(why) = missing_store {
        eprintln!("note: nothing is set: {why}.");
    }
    print_table(&["NAME", "UPDATED", "STATUS"], &rows);
    Ok(())
}

/// Before sealing with `key`: the store's other values must be sealed with it too (one
/// store, one key), and clear values from an older svc get sealed now.
fn prepare(store: &dyn WorkspaceStore, key: &svc_runtime::seal::SecretsKey) -> Result<(), String> {
    let n = svc_runtime::secrets::prepare_store(store, key)?;
    if n > 0 {
        eprintln!("Sealed {n} secret values that an older svc stored in clear.");
    }
    Ok(())
}

fn rotate_key(args: &StoreArgs, new_key_file: &std::path::Path) -> Result<(), String> {
    let store = args.open_existing()??;
    let (old, source) = args.require_secrets_key(false)?;
    let new = svc_runtime::seal::read_key_file(new_key_file)?;
    prepare(store.as_ref(), &old)?;
    let mut resealed = Vec::new();
    for info in store.list_secrets().map_err(|e| e.to_string())? {
        let Some(sealed) = store.secret(&info.name).map_err(|e| e.to_string())? else {
            continue;
        };
        let value = old
            .open(&info.name, &sealed)
            .map_err(|e| format!("cannot open secret `{}`: {e}", info.name))?;
        resealed.push((info.name.clone(), new.seal(&info.name, &value)));
    }
    store.reseal_secrets(&resealed).map_err(|e| e.to_string())?;
    eprintln!(
        "Re-sealed {} secret values in {} under the key {} (was {}).",
        resealed.len(),
        args.describe(),
        new.id_hex(),
        old.id_hex()
    );
    // The old key came from the file svc finds by default beside an SQLite store: left as
    // it was, `svc secrets set` and the servers would go on using the old key and refuse
    // the re-sealed values. The new key takes its place.
    if let svc_runtime::seal::KeySource::Default(path) = &source {
        svc_runtime::seal::replace_key_file(path, &new)?;
        eprintln!(
            "Wrote the new key to {} (the default key file of this store), in place of the old one. Restart the servers.",
            path.display()
        );
    } else {
        eprintln!(
            "Give the servers the new key ({}) in place of {source}, and restart them.",
            new_key_file.display()
        );
    }
    Ok(())
}
