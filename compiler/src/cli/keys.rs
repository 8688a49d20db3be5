//! `svc keys create|list|revoke|rotate`: API keys in the workspace store.
//!
//! A key is printed once, when created, and stored only as a SHA-256 hash. Running
//! servers pick up new, revoked and rotated keys within a second, without a restart.

use super::store::{StoreArgs, format_time, parse_duration};
use clap::Subcommand;
use svc_runtime::apikey::{KeyRecord, unix_now};
use svc_runtime::store::WorkspaceStore;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    store: StoreArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Create a key and print it once.
    #[command(after_help = "Example:\n  svc keys create --name ci --owner alice --expires-in 90d")]
    Create {
        /// A name for the key (what it is for).
        #[arg(long)]
        name: String,
        /// Who the key belongs to: the `user` identity of Check API Key.
        #[arg(long)]
        owner: String,
        /// Make the key expire after this long (`30d`, `12h`); default: never.
        #[arg(long, value_name = "DURATION")]
        expires_in: Option<String>,
    },
    /// List keys (never the keys themselves).
    #[command(after_help = "Example:\n  svc keys list --format json")]
    List {
        #[arg(long, value_enum, default_value_t = ListFormat::Table)]
        format: ListFormat,
    },
    /// Revoke a key by id or name; running servers refuse it within a second.
    #[command(after_help = "Example:\n  svc keys revoke key_7Xk2f9Qp1z")]
    Revoke { id_or_name: String },
    /// Replace a key with a new one of the same name and owner, and print it once.
    ///
    /// The new key keeps the old one's name, owner and lifetime: a key made with
    /// `--expires-in 90d` is replaced by one that expires 90 days after the rotation.
    #[command(
        after_help = "Examples:\n  svc keys rotate ci                 # the old key stops working now\n  svc keys rotate ci --grace 1h      # the old key keeps working for an hour"
    )]
    Rotate {
        id_or_name: String,
        /// Keep the old key working for this long (`1h`); default: revoke it now.
        #[arg(long, value_name = "DURATION")]
        grace: Option<String>,
        /// Make the new key expire after this long; default: the old key's lifetime
        /// (never, if it had none).
        #[arg(long, value_name = "DURATION")]
        expires_in: Option<String>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ListFormat {
    Table,
    Json,
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

/// Issues and stores a key. Every argument is checked by the caller first: nothing is
/// written for a command that then fails.
fn insert_new(
    store: &dyn WorkspaceStore,
    name: &str,
    owner: &str,
    expires_at: Option<i64>,
) -> Result<(String, KeyRecord), String> {
    let (key, record) = KeyRecord::issue(name, owner, unix_now(), expires_at);
    store.insert_key(&record).map_err(|e| e.to_string())?;
    Ok((key, record))
}

/// The active keys answering to `id_or_name`, oldest first.
fn active_keys(store: &dyn WorkspaceStore, id_or_name: &str) -> Result<Vec<KeyRecord>, String> {
    let now = unix_now();
    Ok(store
        .list_keys()
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|k| k.revoked_at.is_none() && k.expires_at.is_none_or(|e| e > now))
        .filter(|k| k.id == id_or_name || k.name == id_or_name)
        .collect())
}

/// The key `svc keys rotate` replaces: the one key with that id or name. While an earlier
/// rotation's grace period runs, the old key shares the name with its replacement; the
/// replacement, which outlives the keys being retired, is meant. Two keys that would live
/// as long are ambiguous: rotate one by id.
fn key_to_rotate(store: &dyn WorkspaceStore, id_or_name: &str) -> Result<KeyRecord, String> {
    let found = active_keys(store, id_or_name)?;
    let lives = |k: &KeyRecord| k.expires_at.unwrap_or(i64::MAX);
    let Some(longest) = found.iter().map(lives).max() else {
        return Err(format!(
            "no active key has the id or name `{id_or_name}` (see `svc keys list`)"
        ));
    };
    let mut outliving: Vec<&KeyRecord> = found.iter().filter(|k| lives(k) == longest).collect();
    if outliving.len() == 1 {
        return Ok(outliving.remove(0).clone());
    }
    let ids: Vec<&str> = found.iter().map(|k| k.id.as_str()).collect();
    Err(format!(
        "several active keys are named `{id_or_name}` ({}); rotate one by id",
        ids.join(", ")
    ))
}

fn print_new(key: &str, record: &KeyRecord, verb: &str) {
    let expiry = record
        .expires_at
        .map(|e| format!("expires {}", format_time(e)))
        .unwrap_or_else(|| "never expires".into());
    eprintln!(
        "{verb} API key `{}` ({}), owner `{}`, {expiry}.",
        record.name, record.id, record.owner
    );
    eprintln!("Copy it now: it is shown once and stored only as a hash.");
    eprintln!();
    // The key alone on stdout, so that `svc keys create … > key.txt` captures just it.
    println!("{key}");
}

fn execute(args: Args) -> Result<(), String> {
    // Only `create` makes a store; the others read or change keys that must exist.
    let store = match &args.command {
        Command::Create { .. } => args.store.open()?,
        Command::List { .. } => match args.store.open_existing()? {
            Ok(store) => store,
            Err(why) => {
                eprintln!("No API keys: {why}.");
                return Ok(());
            }
        },
        Command::Revoke { .. } | Command::Rotate { .. } => args.store.open_existing()??,
    };
    match args.command {
        Command::Create {
            name,
            owner,
            expires_in,
        } => {
            if name.trim().is_empty() || owner.trim().is_empty() {
                return Err("the key needs a non-empty --name and --owner".into());
            }
            let lifetime = expires_in.as_deref().map(parse_duration).transpose()?;
            // Names address keys in `revoke` and `rotate`: two active keys of one name
            // would make both ambiguous.
            if let Some(existing) = active_keys(store.as_ref(), &name)?.first() {
                return Err(format!(
                    "an active key is already named `{name}` ({}): choose another --name, or replace that key with `svc keys rotate {name}`",
                    existing.id
                ));
            }
            let (key, record) = insert_new(store.as_ref(), &name, &owner, lifetime.map(|d| unix_now() + d))?;
            print_new(&key, &record, "Created");
        }
        Command::List { format } => {
            let now = unix_now();
            let keys = store.list_keys().map_err(|e| e.to_string())?;
            match format {
                ListFormat::Json => {
                    let rows: Vec<serde_json::Value> = keys
                        .iter()
                        .map(|k| {
                            serde_json::json!({
                                "id": k.id, "name": k.name, "owner": k.owner, "prefix": k.prefix,
                                "createdAt": k.created_at, "expiresAt": k.expires_at, "revokedAt": k.revoked_at,
                                "status": k.status(now).as_str(),
                            })
                        })
                        .collect();
                    println!("{}", serde_json::to_string_pretty(&rows).unwrap_or_default());
                }
                ListFormat::Table => {
                    if keys.is_empty() {
                        eprintln!(
                            "No API keys in {}. Create one with `svc keys create --name NAME --owner OWNER`.",
                            args.store.describe()
                        );
                        return Ok(());
                    }
                    let rows: Vec<[String; 7]> = keys
                        .iter()
                        .map(|k| {
                            [
                                k.id.clone(),
                                k.name.clone(),
                                k.owner.clone(),
                                k.prefix.clone(),
                                format_time(k.created_at),
                                k.expires_at.map(format_time).unwrap_or_else(|| "never".into()),
                                k.status(now).as_str().to_string(),
                            ]
                        })
                        .collect();
                    print_table(&["ID", "NAME", "OWNER", "KEY", "CREATED", "EXPIRES", "STATUS"], &rows);
                }
            }
        }
        Command::Revoke { id_or_name } => {
            let record = store.revoke_key(&id_or_name, unix_now()).map_err(|e| e.to_string())?;
            eprintln!(
                "Revoked API key `{}` ({}); running servers refuse it within a second.",
                record.name, record.id
            );
        }
        Command::Rotate {
            id_or_name,
            grace,
            expires_in,
        } => {
            // Every argument first: a command that fails writes nothing.
            let grace = grace.as_deref().map(parse_duration).transpose()?;
            let lifetime = expires_in.as_deref().map(parse_duration).transpose()?;
            let old = key_to_rotate(store.as_ref(), &id_or_name)?;
            let now = unix_now();
            // The old key's lifetime, unless --expires-in says otherwise.
            let lifetime = lifetime.or(old.expires_at.map(|e| e - old.created_at));
            let (key, record) = insert_new(store.as_ref(), &old.name, &old.owner, lifetime.map(|d| now + d))?;
            let retired = match grace {
                Some(g) if g > 0 => {
                    let until = old.expires_at.map(|e| e.min(now + g)).unwrap_or(now + g);
                    store
                        .set_key_expiry(&old.id, until)
                        .map(|()| format!("The old key {} keeps working until {}.", old.id, format_time(until)))
                }
                _ => store
                    .revoke_key(&old.id, now)
                    .map(|_| format!("Revoked the old key {}.", old.id)),
            };
            // The new key works whatever happens to the old one: it is shown in any case.
            match retired {
                Ok(line) => {
                    eprintln!("{line}");
                    print_new(&key, &record, "Rotated");
                }
                Err(e) => {
                    print_new(&key, &record, "Rotated");
                    return Err(format!(
                        "the old key {} could not be retired ({e}); it still works: revoke it with `svc keys revoke {}`",
                        old.id, old.id
                    ));
                }
            }
        }
    }
    Ok(())
}

pub fn print_table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    println!("{}", line(header.to_vec()));
    for row in rows {
        println!("{}", line(row.iter().map(String::as_str).collect()));
    }
}
