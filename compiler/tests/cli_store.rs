//! `svc keys`, `svc secrets` and `svc store` with the real binary, against a real store
//! file and a real PostgreSQL.

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::{outcome, scratch_dir, svc_command};
use svc_runtime::apikey::{KeyIndex, unix_now};
use svc_runtime::store::{SqliteStore, WorkspaceStore};

fn temp_store(name: &str) -> PathBuf {
    let dir = scratch_dir(&format!("cli-store-{name}"));
    dir.join("workspace.db")
}

fn svc(store: &Path, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let mut with_store: Vec<&str> = args.to_vec();
    let store = store.to_str().unwrap();
    with_store.extend(["--store", store]);
    svc_in(Path::new("."), &with_store, stdin)
}

/// `svc` in `dir`, with no store named unless `args` names one (the default is
/// `.svc/workspace.db` there) and no secrets key from the environment.
fn svc_in(dir: &Path, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let mut child = svc_command()
        .args(args)
        .current_dir(dir)
        .env_remove("SVC_STORE")
        .env_remove("SVC_SECRETS_KEY")
        .env_remove("SVC_SECRETS_KEY_FILE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(input) = stdin {
        // svc may refuse the command line and exit before reading its input: a broken pipe
        // here is that, and the exit code below says what happened.
        match child.stdin.take().unwrap().write_all(input.as_bytes()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other.unwrap(),
        }
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    outcome(out)
}

/// `svc LINE --store STORE`, which must succeed: what it printed on stdout and stderr.
fn succeeds(store: &Path, line: &str) -> (String, String) {
    let (code, stdout, stderr) = svc(store, &words(line), None);
    assert_eq!(code, 0, "svc {line}: {stderr}");
    (stdout, stderr)
}

/// A command line's words.
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

#[test]
fn keys_are_printed_once_and_stored_as_hashes() {
    let store = temp_store("keys");
    let (stdout, stderr) = succeeds(&store, "keys create --name ci --owner alice --expires-in 30d");
    let key = stdout.trim().to_string();
    assert!(key.starts_with("svck_") && key.len() == 41, "{key}");
    assert!(stderr.contains("shown once"));
    // The store holds the hash, not the key.
    let bytes = std::fs::read(&store).unwrap();
    assert!(
        !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
        "the key is in the store file"
    );
    let records = SqliteStore::open(&store).unwrap().list_keys().unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(
        &*KeyIndex::new(records).verify(Some(&key), unix_now()).unwrap().user,
        "alice"
    );
    // Listing shows a prefix, never the key.
    let (code, stdout, _) = svc(&store, &["keys", "list"], None);
    assert_eq!(code, 0);
    assert!(stdout.contains("ci") && stdout.contains("alice") && stdout.contains("active"));
    assert!(!stdout.contains(&key));
    assert!(stdout.contains(&key[..9]));
    let (_, json, _) = svc(&store, &["keys", "list", "--format", "json"], None);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    assert_eq!(rows[0]["status"], "active");
    assert!(rows[0]["expiresAt"].as_i64().unwrap() > unix_now() + 29 * 86_400);
}

#[test]
fn revoke_and_rotate() {
    let store = temp_store("rotate");
    let (_, old_key, _) = svc(&store, &["keys", "create", "--name", "ci", "--owner", "alice"], None);
    let (new_key, _) = succeeds(&store, "keys rotate ci");
    let index = KeyIndex::new(SqliteStore::open(&store).unwrap().list_keys().unwrap());
    assert!(
        index.verify(Some(old_key.trim()), unix_now()).is_err(),
        "the old key is revoked"
    );
    assert_eq!(
        &*index.verify(Some(new_key.trim()), unix_now()).unwrap().user,
        "alice",
        "same owner"
    );
    let (code, _, _) = svc(&store, &["keys", "revoke", "ci"], None);
    assert_eq!(code, 0);
    let index = KeyIndex::new(SqliteStore::open(&store).unwrap().list_keys().unwrap());
    assert!(index.verify(Some(new_key.trim()), unix_now()).is_err());
    let (code, _, stderr) = svc(&store, &["keys", "revoke", "ci"], None);
    assert_eq!(code, 1);
    assert!(stderr.contains("no active key"), "{stderr}");
    // With a grace period the old key keeps working for a while.
    let (_, k1, _) = svc(&store, &["keys", "create", "--name", "deploy", "--owner", "bob"], None);
    let (_, _k2, _) = svc(&store, &["keys", "rotate", "deploy", "--grace", "1h"], None);
    let index = KeyIndex::new(SqliteStore::open(&store).unwrap().list_keys().unwrap());
    assert!(index.verify(Some(k1.trim()), unix_now()).is_ok());
    assert!(index.verify(Some(k1.trim()), unix_now() + 3601).is_err());
}

#[test]
fn secrets_come_from_stdin_or_files_and_are_never_listed() {
    let store = temp_store("secrets");
    let (code, stdout, stderr) = svc(&store, &["secrets", "set", "API_TOKEN"], Some("tok-very-secret\n"));
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("tok-very-secret") && !stderr.contains("tok-very-secret"));
    // Sealed with a key the first `set` created beside the store, readable by its owner only.
    let key_file = store.with_file_name("secrets.key");
    assert!(stderr.contains("Created the secrets key"), "{stderr}");
    let key = svc_runtime::seal::read_key_file(&key_file).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let sealed = SqliteStore::open(&store).unwrap().secret("API_TOKEN").unwrap().unwrap();
    assert_eq!(
        key.open("API_TOKEN", &sealed).unwrap(),
        "tok-very-secret",
        "the trailing newline is not part of the value"
    );
    let bytes = std::fs::read(&store).unwrap();
    assert!(
        !bytes.windows(15).any(|w| w == b"tok-very-secret"),
        "the value is not in the store file in clear"
    );
    let file = store.with_file_name("value.txt");
    std::fs::write(&file, "from-a-file").unwrap();
    let (code, _, _) = svc(
        &store,
        &["secrets", "set", "OTHER_TOKEN", "--from-file", file.to_str().unwrap()],
        None,
    );
    assert_eq!(code, 0);
    let (_, stdout, _) = svc(&store, &["secrets", "list"], None);
    assert!(stdout.contains("API_TOKEN") && stdout.contains("OTHER_TOKEN"));
    assert!(!stdout.contains("tok-very-secret") && !stdout.contains("from-a-file"));
    assert_eq!(svc(&store, &["secrets", "set", "EMPTY"], Some("")).0, 1);
    assert_eq!(svc(&store, &["secrets", "set", "lower-case"], Some("x")).0, 1);
    assert_eq!(svc(&store, &["secrets", "unset", "OTHER_TOKEN"], None).0, 0);
    assert_eq!(svc(&store, &["secrets", "unset", "OTHER_TOKEN"], None).0, 1);
    // The command line has no way to pass a value.
    assert_ne!(svc(&store, &["secrets", "set", "API_TOKEN", "value"], None).0, 0);
}

/// `svc secrets list --project` on a store with no secrets set names the project's
/// `required` secret as missing and its `optional` one as not set.
fn assert_listed_unset(store: &Path, project: &Path, required: &str, optional: &str) {
    let (code, stdout, stderr) = svc(
        store,
        &["secrets", "list", "--project", project.to_str().unwrap()],
        None,
    );
    assert_eq!(code, 0, "{stderr}");
    for (name, state) in [(required, "MISSING (required)"), (optional, "not set (optional)")] {
        let line = stdout.lines().find(|l| l.contains(name));
        assert!(line.is_some_and(|l| l.contains(state)), "{name}: {state}\n{stdout}");
    }
}

#[test]
fn secrets_list_reports_required_secrets_without_values() {
    let store = temp_store("required");
    let hooks = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/hooks");
    assert_listed_unset(&store, &hooks, "WEBHOOK_SIGNING_KEY", "PREVIOUS_SIGNING_KEY");
}

/// A TypeScript project declares its secrets in `svc.config.ts`: listed all the same.
#[test]
fn secrets_list_reads_a_typescript_config() {
    let store = temp_store("ts-config");
    let project = store.parent().unwrap().join("ts-project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("svc.config.ts"),
        r#"import { collectAssets, defineSecret } from "@svc/sdk";
export default {
  projectName: "tsapi",
  workspaceId: "acme",
  apiId: "tsapi",
  ...collectAssets([defineSecret({ name: "PAYMENT_TOKEN" }), defineSecret({ name: "OPTIONAL_TOKEN", required: false })]),
};
"#,
    )
    .unwrap();
    assert_listed_unset(&store, &project, "PAYMENT_TOKEN", "OPTIONAL_TOKEN");
}

#[test]
fn secrets_keys_are_generated_rotated_and_wrong_keys_refused() {
    let store = temp_store("rotate");
    let dir = store.parent().unwrap().to_path_buf();
    let (code, old_key, _) = svc(&store, &["secrets", "keygen"], None);
    assert_eq!(code, 0);
    let old_file = dir.join("old.key");
    std::fs::write(&old_file, &old_key).unwrap();
    let old = old_file.to_str().unwrap();
    let (code, _, stderr) = svc(
        &store,
        &["secrets", "set", "TOKEN", "--secrets-key-file", old],
        Some("v-1"),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!dir.join("secrets.key").exists(), "a given key: no default key file");

    // Another key cannot add to a store sealed with the first.
    let (_, other_key, _) = svc(&store, &["secrets", "keygen"], None);
    let other_file = dir.join("other.key");
    std::fs::write(&other_file, &other_key).unwrap();
    let (code, _, stderr) = svc(
        &store,
        &[
            "secrets",
            "set",
            "MORE",
            "--secrets-key-file",
            other_file.to_str().unwrap(),
        ],
        Some("v-2"),
    );
    assert_eq!(code, 1);
    assert!(
        stderr.contains("is not the one the secrets in") && !stderr.contains("v-1"),
        "{stderr}"
    );

    // Rotation re-seals every value under the new key.
    let (code, _, stderr) = svc(
        &store,
        &[
            "secrets",
            "rotate-key",
            "--secrets-key-file",
            old,
            "--new-key-file",
            other_file.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 0, "{stderr}");
    let new = svc_runtime::seal::read_key_file(&other_file).unwrap();
    let sealed = SqliteStore::open(&store).unwrap().secret("TOKEN").unwrap().unwrap();
    assert_eq!(new.open("TOKEN", &sealed).unwrap(), "v-1");
}

#[test]
fn keys_and_secrets_live_in_postgres_and_copy_over_from_sqlite() {
    let pg = svc_testkit::Postgres::start();
    let url = PathBuf::from(pg.url());
    // A shared store never gets a default key: without one, `secrets set` says what to do.
    let (code, _, stderr) = svc(&url, &["secrets", "set", "TOKEN"], Some("v"));
    assert_eq!(code, 1);
    assert!(stderr.contains("svc secrets keygen"), "{stderr}");

    let (code, key, stderr) = svc(&url, &["keys", "create", "--name", "ci", "--owner", "alice"], None);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, _) = svc(&url, &["keys", "list", "--format", "json"], None);
    assert_eq!(code, 0);
    assert!(stdout.contains("\"alice\"") && !stdout.contains(key.trim()), "{stdout}");

    // A workspace made in SQLite moves over, keys and sealed secrets.
    let sqlite = temp_store("copy");
    let (_, old_key, _) = svc(&sqlite, &["keys", "create", "--name", "old", "--owner", "bob"], None);
    assert_eq!(svc(&sqlite, &["secrets", "set", "TOKEN"], Some("t-value")).0, 0);
    let target = svc_testkit::Postgres::start();
    let mut copy = Command::new(env!("CARGO_BIN_EXE_svc"));
    copy.args(["store", "copy", "--from"])
        .arg(&sqlite)
        .args(["--to", &target.url()]);
    let out = copy.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("Copied 1 keys, 1 secrets (sealed)"), "{stderr}");
    let copied = svc_runtime::store::PostgresStore::connect(&target.url()).unwrap();
    let index = KeyIndex::new(copied.list_keys().unwrap());
    assert_eq!(&*index.verify(Some(old_key.trim()), unix_now()).unwrap().user, "bob");
    let key = svc_runtime::seal::read_key_file(&sqlite.with_file_name("secrets.key")).unwrap();
    assert_eq!(
        key.open("TOKEN", &copied.secret("TOKEN").unwrap().unwrap()).unwrap(),
        "t-value"
    );
    // Copying again would merge two workspaces: refused.
    assert!(!copy.output().unwrap().status.success());
}

/// A newcomer's report: `rotate r --grace 1` created the new key, then failed on `--grace`
/// without showing it, and every later rotation failed on two active keys named `r`.
#[test]
fn a_rotation_that_fails_on_its_arguments_writes_nothing() {
    let store = temp_store("rotate-args");
    let (old_key, _) = succeeds(&store, "keys create --name r --owner alice");
    for bad in [
        &["--grace", "1"][..],
        &["--expires-in", "soon"][..],
        &["--grace", "0d"][..],
    ] {
        let mut args = vec!["keys", "rotate", "r"];
        args.extend_from_slice(bad);
        let (code, stdout, stderr) = svc(&store, &args, None);
        assert_eq!(code, 1, "{bad:?}: {stderr}");
        assert!(stdout.is_empty(), "{bad:?}: no key is printed");
        assert!(stderr.contains(bad[1]), "{bad:?}: the value is named: {stderr}");
        assert_eq!(
            SqliteStore::open(&store).unwrap().list_keys().unwrap().len(),
            1,
            "{bad:?}: nothing written"
        );
    }
    succeeds(&store, "keys rotate r --grace 1h");
    // During the grace period both keys are named `r`: rotating by name means the new one.
    let (newest, _) = succeeds(&store, "keys rotate r");
    let index = KeyIndex::new(SqliteStore::open(&store).unwrap().list_keys().unwrap());
    assert!(
        index.verify(Some(old_key.trim()), unix_now()).is_ok(),
        "still in its grace period"
    );
    assert!(index.verify(Some(newest.trim()), unix_now()).is_ok());
}

#[test]
fn rotation_keeps_the_lifetime_and_names_stay_unique_among_active_keys() {
    let store = temp_store("rotate-expiry");
    succeeds(&store, "keys create --name ci --owner alice --expires-in 90d");
    let (_, stderr) = succeeds(&store, "keys rotate ci");
    assert!(stderr.contains("expires"), "{stderr}");
    let keys = SqliteStore::open(&store).unwrap().list_keys().unwrap();
    let new = keys.iter().find(|k| k.revoked_at.is_none()).unwrap();
    let lifetime = new.expires_at.expect("the new key expires too") - new.created_at;
    assert_eq!(lifetime, 90 * 86_400);
    // A second active key of one name is refused, and the message says what to do.
    let (code, stdout, stderr) = svc(&store, &["keys", "create", "--name", "ci", "--owner", "bob"], None);
    assert_eq!(code, 1);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("already named `ci`") && stderr.contains("svc keys rotate ci"),
        "{stderr}"
    );
    // Once revoked, the name is free again.
    assert_eq!(svc(&store, &["keys", "revoke", "ci"], None).0, 0);
    assert_eq!(
        svc(&store, &["keys", "create", "--name", "ci", "--owner", "bob"], None).0,
        0
    );
}

/// A newcomer's reports: `svc keys list` in the wrong directory made an empty
/// `.svc/workspace.db` there; `svc secrets list --project my-api` from the parent read the
/// parent's store and called a set secret MISSING.
#[test]
fn read_only_commands_create_no_store_and_project_lists_read_the_projects_store() {
    let parent = temp_store("project-dir").parent().unwrap().to_path_buf();
    let project = parent.join("my-api");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("svc.config.yaml"),
        "project_name: my-api\nworkspace_id: ws\napi_id: api\nsecrets:\n  - { name: GREETING_TOKEN, required: true }\n",
    )
    .unwrap();
    for args in [&["keys", "list"][..], &["secrets", "list"][..]] {
        let (code, _, stderr) = svc_in(&parent, args, None);
        assert_eq!(code, 0, "{args:?}: {stderr}");
        assert!(stderr.contains("there is no workspace store"), "{args:?}: {stderr}");
        assert!(
            !parent.join(".svc").exists(),
            "{args:?} created a store in the wrong directory"
        );
    }
    let (code, _, stderr) = svc_in(&parent, &["keys", "revoke", "ci"], None);
    assert_eq!(code, 1);
    assert!(stderr.contains("there is no workspace store"), "{stderr}");
    assert!(!parent.join(".svc").exists());

    let (code, _, stderr) = svc_in(&project, &["secrets", "set", "GREETING_TOKEN"], Some("hello"));
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = svc_in(&parent, &["secrets", "list", "--project", "my-api"], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("GREETING_TOKEN") && !stdout.contains("MISSING"),
        "{stdout}"
    );
    assert!(!parent.join(".svc").exists());
}

/// `svc secrets rotate-key --new-key-file new.key` with the default key file left
/// `.svc/secrets.key` as it was, after which `svc secrets set` and the servers refused the
/// store. The new key now takes the default file's place.
#[test]
fn rotating_the_default_key_replaces_the_default_key_file() {
    let dir = temp_store("rotate-default").parent().unwrap().to_path_buf();
    let (code, _, stderr) = svc_in(&dir, &["secrets", "set", "TOKEN"], Some("v-1"));
    assert_eq!(code, 0, "{stderr}");
    let default_file = dir.join(".svc/secrets.key");
    assert!(default_file.exists());
    // A server with a shared limiter has kept its MAC key in the store.
    let old = svc_runtime::seal::read_key_file(&default_file).unwrap();
    let store_file = dir.join(".svc/workspace.db");
    let mac = svc_runtime::secrets::rate_limit_mac_key(&SqliteStore::open(&store_file).unwrap(), &old).unwrap();
    let (_, new_key, _) = svc_in(&dir, &["secrets", "keygen"], None);
    std::fs::write(dir.join("new.key"), &new_key).unwrap();
    let (code, _, stderr) = svc_in(&dir, &["secrets", "rotate-key", "--new-key-file", "new.key"], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("in place of the old one"), "{stderr}");
    let written = svc_runtime::seal::read_key_file(&default_file).unwrap();
    assert_eq!(written.to_base64(), new_key.trim());
    // Re-sealed with the others: the limiter's Redis keys stay the same.
    let store = SqliteStore::open(&store_file).unwrap();
    assert_eq!(svc_runtime::secrets::rate_limit_mac_key(&store, &written).unwrap(), mac);
    // The store goes on working with the default key.
    let (code, _, stderr) = svc_in(&dir, &["secrets", "set", "MORE"], Some("v-2"));
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = svc_in(&dir, &["secrets", "list"], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("TOKEN") && stdout.contains("MORE"), "{stdout}");
    assert!(!stdout.contains("__SVC"), "svc's own secrets are not listed: {stdout}");
}
