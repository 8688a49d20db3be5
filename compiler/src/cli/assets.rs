//! `svc assets sync [DIR] [--dry-run]`: the config's enums, structures and secret
//! requirements, and the node manifests, written to the workspace store.
//!
//! The store holds exactly what the project declares after a sync: assets that are new
//! are added, those whose definition changed are replaced, and those the project no
//! longer declares are removed. Each is compared by its JSON, so a second sync of an
//! unchanged project changes nothing and says so.

use super::store::StoreArgs;
use std::collections::BTreeMap;
use std::path::PathBuf;
use svc_runtime::store::StoredAsset;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Write the project's assets to the workspace store.
    #[command(
        after_help = "Examples:\n  svc assets sync                     # the project in the current directory\n  svc assets sync my-api --dry-run    # show what would change\n\nPrints `+` for each asset added, `~` changed, `-` removed."
    )]
    Sync(SyncArgs),
}

#[derive(clap::Args)]
pub struct SyncArgs {
    /// The project directory (default: the current directory).
    dir: Option<PathBuf>,
    /// Print what would change without writing anything.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    store: StoreArgs,
}

/// The assets a checked project declares, sorted by kind and name.
pub fn project_assets(checked: &crate::check::Checked) -> Vec<StoredAsset> {
    fn asset(kind: &str, name: &str, value: &impl serde::Serialize) -> StoredAsset {
        StoredAsset {
            kind: kind.into(),
            name: name.into(),
            json: serde_json::to_string(value).expect("assets serialize"),
        }
    }
    let assets = &checked.assets;
    let mut out: Vec<StoredAsset> = (assets.enums.iter().map(|e| asset("enum", &e.name, e)))
        .chain(assets.structures.iter().map(|s| asset("structure", &s.name, s)))
        .chain(assets.secrets.iter().map(|s| asset("secret", &s.name, s)))
        .chain(
            checked
                .catalog
                .nodes
                .iter()
                .map(|(key, info)| asset("node", key, &info.manifest)),
        )
        .collect();
    out.sort_by(|a, b| (&a.kind, &a.name).cmp(&(&b.kind, &b.name)));
    out
}

/// What a sync changes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    pub added: Vec<(String, String)>,
    pub changed: Vec<(String, String)>,
    pub removed: Vec<(String, String)>,
}

pub fn plan(stored: &[StoredAsset], wanted: &[StoredAsset]) -> Plan {
    let before: BTreeMap<(&str, &str), &str> = stored
        .iter()
        .map(|a| ((a.kind.as_str(), a.name.as_str()), a.json.as_str()))
        .collect();
    let after: BTreeMap<(&str, &str), &str> = wanted
        .iter()
        .map(|a| ((a.kind.as_str(), a.name.as_str()), a.json.as_str()))
        .collect();
    let mut plan = Plan::default();
    for (&(kind, name), json) in &after {
        match before.get(&(kind, name)) {
            None => plan.added.push((kind.into(), name.into())),
            Some(old) if old != json => plan.changed.push((kind.into(), name.into())),
            Some(_) => {}
        }
    }
    for &(kind, name) in before.keys() {
        if !after.contains_key(&(kind, name)) {
            plan.removed.push((kind.into(), name.into()));
        }
    }
    plan
}

pub fn run(command: Command) -> i32 {
    let Command::Sync(args) = command;
    let dir = super::project_dir(args.dir);
    let Some(wanted) = crate::pipeline::with_checked(&dir, "nothing was synced", |c| {
        let secrets: Vec<(String, bool)> = c.assets.secrets.iter().map(|s| (s.name.clone(), s.required)).collect();
        (project_assets(c), secrets)
    }) else {
        return 1;
    };
    let (wanted, secrets) = wanted;
    let store = match args.store.open() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let stored = match store.list_assets() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let plan = plan(&stored, &wanted);
    let verb = |done: &str, would: &str| {
        if args.dry_run {
            would.to_string()
        } else {
            done.to_string()
        }
    };
    for (sign, list, word) in [
        ('+', &plan.added, verb("added", "would add")),
        ('~', &plan.changed, verb("changed", "would change")),
        ('-', &plan.removed, verb("removed", "would remove")),
    ] {
        for (kind, name) in list {
            println!("{sign} {kind} {name} ({word})");
        }
    }
    let changes = plan.added.len() + plan.changed.len() + plan.removed.len();
    if changes == 0 {
        println!(
            "assets are up to date ({} in the store: {})",
            wanted.len(),
            args.store.describe()
        );
    } else if args.dry_run {
        println!("dry run: {changes} change(s) not written");
    } else {
        if let Err(e) = store.replace_assets(&wanted, svc_runtime::apikey::unix_now()) {
            eprintln!("error: {e}");
            return 1;
        }
        println!(
            "synced {} assets to {}: {} added, {} changed, {} removed",
            wanted.len(),
            args.store.describe(),
            plan.added.len(),
            plan.changed.len(),
            plan.removed.len()
        );
    }
    // Secret values are not assets: report the required ones that have none (names only).
    let mut missing = Vec::new();
    for (name, required) in secrets {
        if required && matches!(store.secret(&name), Ok(None)) {
            missing.push(name);
        }
    }
    for name in &missing {
        eprintln!(
            "warning: required secret `{name}` has no value in the store; set it with `printf %s \"$VALUE\" | svc secrets set {name}`"
        );
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(kind: &str, name: &str, json: &str) -> StoredAsset {
        StoredAsset {
            kind: kind.into(),
            name: name.into(),
            json: json.into(),
        }
    }

    #[test]
    fn a_plan_names_additions_changes_and_removals() {
        let stored = [a("enum", "A", "1"), a("enum", "B", "1"), a("node", "x.y", "1")];
        let wanted = [a("enum", "A", "1"), a("enum", "B", "2"), a("structure", "C", "1")];
        let p = plan(&stored, &wanted);
        assert_eq!(p.added, vec![("structure".into(), "C".into())]);
        assert_eq!(p.changed, vec![("enum".into(), "B".into())]);
        assert_eq!(p.removed, vec![("node".into(), "x.y".into())]);
        assert_eq!(plan(&wanted, &wanted), Plan::default());
    }
}
