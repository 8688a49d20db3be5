//! `svc keys create|list|revoke|rotate`: API keys in the workspace store.
//!
//! A key is printed once, when created, and stored only as a SHA-256 hash. Running
//! servers pick up new, revoked and rotated keys within a second, without a restart.

use super::store::{OnStore, format_time, parse_duration};
use crate::keys::{self, KeyError};
use clap::Subcommand;
use svc_runtime::apikey::{KeyRecord, unix_now};

pub type Args = OnStore<Command>;

#[derive(Subcommand)]
pub enum Command {
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
pub enum ListFormat {
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

/// A key error in the words of the command line.
fn worded(e: KeyError) -> String {
    match e {
        KeyError::EmptyNameOrOwner => "the key needs a non-empty --name and --owner".into(),
        KeyError::NameTaken { name, id } => format!(
            "an active key is already named `{name}` ({id}): choose another --name, or replace that key with `svc keys rotate {name}`"
        ),
        KeyError::NoActiveKey(id_or_name) => {
            format!("no active key has the id or name `{id_or_name}` (see `svc keys list`)")
        }
        other => other.to_string(),
    }
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
            let lifetime = expires_in.as_deref().map(parse_duration).transpose()?;
            let keys::Issued { key, record } = keys::create(store.as_ref(), &name, &owner, lifetime).map_err(worded)?;
            print_new(&key, &record, "Created");
        }
        Command::List { format } => {
            let now = unix_now();
            let records = store.list_keys().map_err(|e| e.to_string())?;
            match format {
                ListFormat::Json => {
                    let rows: Vec<serde_json::Value> = records.iter().map(|k| keys::summary(k, now)).collect();
                    println!("{}", serde_json::to_string_pretty(&rows).unwrap_or_default());
                }
                ListFormat::Table => {
                    if records.is_empty() {
                        eprintln!(
                            "No API keys in {}. Create one with `svc keys create --name NAME --owner OWNER`.",
                            args.store.describe()
                        );
                        return Ok(());
                    }
                    let rows: Vec<[String; 7]> = records
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
            let record = keys::revoke(store.as_ref(), &id_or_name).map_err(worded)?;
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
            let rotation = keys::rotate(store.as_ref(), &id_or_name, grace, lifetime).map_err(worded)?;
            let (new, old) = (&rotation.issued, &rotation.old);
            // The new key works whatever happens to the old one: it is shown in any case.
            match rotation.retired {
                Ok(until) if grace.is_some_and(|g| g > 0) => {
                    eprintln!("The old key {} keeps working until {}.", old.id, format_time(until));
                    print_new(&new.key, &new.record, "Rotated");
                }
                Ok(_) => {
                    eprintln!("Revoked the old key {}.", old.id);
                    print_new(&new.key, &new.record, "Rotated");
                }
                Err(e) => {
                    print_new(&new.key, &new.record, "Rotated");
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
