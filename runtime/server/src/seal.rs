//! Secret values at rest: sealed with XChaCha20-Poly1305 under a 256-bit key that the
//! server and the CLI are given, never stored beside the values in a shared store.
//!
//! A sealed value is `svc1 ‖ key id (8) ‖ nonce (24) ‖ ciphertext ‖ tag (16)`. The key id
//! (the first 8 bytes of a SHA-256 of the key under a domain label) lets a wrong key be
//! told apart from a damaged value without trying to decrypt anything, and names no
//! value. The secret's name is the associated data, so a sealed value copied onto another
//! name does not open.
//!
//! Where the key comes from ([`KeySource::resolve`]), in order: `SVC_SECRETS_KEY_FILE` (or
//! `--secrets-key-file`): a file holding the key in base64; `SVC_SECRETS_KEY`: the key in
//! base64; and for an SQLite store only, `secrets.key` beside the database file, which
//! `svc secrets set` creates (readable by its owner only) the first time it needs a key.
//! A shared store (PostgreSQL) never gets a default key: give every instance the same one.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The environment variable holding the key in base64.
pub const KEY_ENV: &str = "SVC_SECRETS_KEY";
/// The environment variable naming a file that holds the key in base64.
pub const KEY_FILE_ENV: &str = "SVC_SECRETS_KEY_FILE";
/// The default key file's name, beside an SQLite store.
pub const DEFAULT_KEY_FILE: &str = "secrets.key";

const MAGIC: &[u8; 4] = b"svc1";
const ID_LEN: usize = 8;
const NONCE_LEN: usize = 24;
const HEADER_LEN: usize = MAGIC.len() + ID_LEN + NONCE_LEN;

/// The key secret values are sealed with.
#[derive(Clone)]
pub struct SecretsKey {
    key: [u8; 32],
    id: [u8; ID_LEN],
}

impl std::fmt::Debug for SecretsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretsKey({})", self.id_hex())
    }
}

/// Why a value could not be unsealed (never with the value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SealError {
    /// Sealed under another key (its id, and the id of the key given).
    WrongKey { sealed_with: String, given: String },
    /// Not a sealed value, or damaged (its tag does not verify).
    Damaged,
}

impl std::fmt::Display for SealError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SealError::WrongKey { sealed_with, given } => write!(
                f,
                "sealed with the secrets key {sealed_with}, but the key given is {given}: give the key the secrets were set with (SVC_SECRETS_KEY or SVC_SECRETS_KEY_FILE)"
            ),
            SealError::Damaged => f.write_str("the sealed value is damaged or was not sealed by svc"),
        }
    }
}

impl SecretsKey {
    /// A new random key.
    pub fn generate() -> SecretsKey {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the operating system's random source works");
        SecretsKey::from_bytes(key)
    }

    pub fn from_bytes(key: [u8; 32]) -> SecretsKey {
        let digest = Sha256::new()
            .chain_update(b"svc secrets key id\0")
            .chain_update(key)
            .finalize();
        let mut id = [0u8; ID_LEN];
        id.copy_from_slice(&digest[..ID_LEN]);
        SecretsKey { key, id }
    }

    /// Reads a key written as base64 (surrounding whitespace ignored).
    pub fn from_base64(text: &str) -> Result<SecretsKey, String> {
        let bytes = BASE64
            .decode(text.trim())
            .map_err(|_| "the secrets key is not base64 (make one with `svc secrets keygen`)".to_string())?;
        let key: [u8; 32] = bytes.try_into().map_err(|b: Vec<u8>| {
            format!(
                "the secrets key is {} bytes long; it must be 32 (make one with `svc secrets keygen`)",
                b.len()
            )
        })?;
        Ok(SecretsKey::from_bytes(key))
    }

    pub fn to_base64(&self) -> String {
        BASE64.encode(self.key)
    }

    /// The key's id in hex: safe to print, names the key without revealing it.
    pub fn id_hex(&self) -> String {
        hex(&self.id)
    }

    /// Another key for deriving material (the MAC of rate-limit keys in Redis).
    pub fn derive(&self, label: &str) -> [u8; 32] {
        Sha256::new()
            .chain_update(b"svc derive\0")
            .chain_update(label.as_bytes())
            .chain_update([0])
            .chain_update(self.key)
            .finalize()
            .into()
    }

    /// Seals `value` for the secret `name`.
    pub fn seal(&self, name: &str, value: &str) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).expect("the operating system's random source works");
        let cipher = XChaCha20Poly1305::new(&self.key.into());
        let ciphertext = cipher
            .encrypt(
                &XNonce::from(nonce),
                Payload {
                    msg: value.as_bytes(),
                    aad: name.as_bytes(),
                },
            )
            .expect("sealing a value in memory cannot fail");
        let mut out = Vec::with_capacity(HEADER_LEN + ciphertext.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.id);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&ciphertext);
        out
    }

    /// Opens a value sealed for the secret `name`.
    pub fn open(&self, name: &str, sealed: &[u8]) -> Result<String, SealError> {
        let id = sealed_key_id(sealed).ok_or(SealError::Damaged)?;
        if id != self.id {
            return Err(SealError::WrongKey {
                sealed_with: hex(&id),
                given: self.id_hex(),
            });
        }
        let nonce: [u8; NONCE_LEN] = sealed[MAGIC.len() + ID_LEN..HEADER_LEN]
            .try_into()
            .map_err(|_| SealError::Damaged)?;
        let cipher = XChaCha20Poly1305::new(&self.key.into());
        let plain = cipher
            .decrypt(
                &XNonce::from(nonce),
                Payload {
                    msg: &sealed[HEADER_LEN..],
                    aad: name.as_bytes(),
                },
            )
            .map_err(|_| SealError::Damaged)?;
        String::from_utf8(plain).map_err(|_| SealError::Damaged)
    }
}

/// The id of the key a value was sealed with, if it is a sealed value.
pub fn sealed_key_id(sealed: &[u8]) -> Option<[u8; ID_LEN]> {
    if sealed.len() < HEADER_LEN + 16 || &sealed[..MAGIC.len()] != MAGIC {
        return None;
    }
    sealed[MAGIC.len()..MAGIC.len() + ID_LEN].try_into().ok()
}

/// [`sealed_key_id`] in hex.
pub fn sealed_key_id_hex(sealed: &[u8]) -> Option<String> {
    sealed_key_id(sealed).map(|id| hex(&id))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Where the secrets key was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// A file given by flag or `SVC_SECRETS_KEY_FILE`.
    File(PathBuf),
    /// `SVC_SECRETS_KEY`.
    Environment,
    /// `secrets.key` beside an SQLite store.
    Default(PathBuf),
}

impl std::fmt::Display for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::File(p) => write!(f, "the key file `{}`", p.display()),
            KeySource::Environment => write!(f, "${KEY_ENV}"),
            KeySource::Default(p) => write!(f, "the default key file `{}`", p.display()),
        }
    }
}

impl KeySource {
    /// Finds the key: `file` (a flag, else `SVC_SECRETS_KEY_FILE`), then `SVC_SECRETS_KEY`,
    /// then `default_file` (beside an SQLite store) if it exists. `Ok(None)`: no key.
    pub fn resolve(
        file: Option<&Path>,
        default_file: Option<&Path>,
    ) -> Result<Option<(SecretsKey, KeySource)>, String> {
        let env_file = std::env::var_os(KEY_FILE_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        if let Some(path) = file.map(Path::to_path_buf).or(env_file) {
            let key = read_key_file(&path)?;
            return Ok(Some((key, KeySource::File(path))));
        }
        if let Ok(text) = std::env::var(KEY_ENV)
            && !text.trim().is_empty()
        {
            let key = SecretsKey::from_base64(&text).map_err(|e| format!("${KEY_ENV}: {e}"))?;
            return Ok(Some((key, KeySource::Environment)));
        }
        if let Some(path) = default_file
            && path.exists()
        {
            let key = read_key_file(path)?;
            return Ok(Some((key, KeySource::Default(path.to_path_buf()))));
        }
        Ok(None)
    }
}

/// Reads a key file (base64, surrounding whitespace ignored).
pub fn read_key_file(path: &Path) -> Result<SecretsKey, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the secrets key file `{}`: {e}", path.display()))?;
    SecretsKey::from_base64(&text).map_err(|e| format!("`{}`: {e}", path.display()))
}

/// Writes a new random key to `path`, readable by its owner only; refuses to overwrite.
pub fn create_key_file(path: &Path) -> Result<SecretsKey, String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    let key = SecretsKey::generate();
    write_new_key_file(path, &key)?;
    Ok(key)
}

/// Writes `key` to a new file at `path`, readable by its owner only.
fn write_new_key_file(path: &Path, key: &SecretsKey) -> Result<(), String> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(path)
        .map_err(|e| format!("cannot create the secrets key file `{}`: {e}", path.display()))?;
    writeln!(file, "{}", key.to_base64()).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    file.sync_all()
        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

/// Replaces the key in the file at `path` with `key`, at once: written beside it and
/// renamed over it, so that a reader sees the old key or the new one, never half a file.
pub fn replace_key_file(path: &Path, key: &SecretsKey) -> Result<(), String> {
    let next = path.with_extension("key.new");
    let _ = std::fs::remove_file(&next);
    write_new_key_file(&next, key)?;
    std::fs::rename(&next, path).map_err(|e| format!("cannot replace `{}`: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_values_open_only_with_their_key_and_name() {
        let key = SecretsKey::generate();
        let sealed = key.seal("STRIPE_KEY", "sk_live_123");
        assert!(
            !sealed.windows(11).any(|w| w == b"sk_live_123"),
            "the value is not in the sealed bytes"
        );
        assert_eq!(key.open("STRIPE_KEY", &sealed).unwrap(), "sk_live_123");
        // Two seals of one value differ (random nonces).
        assert_ne!(key.seal("STRIPE_KEY", "sk_live_123"), sealed);
        // Another name: the associated data differs.
        assert_eq!(key.open("OTHER", &sealed), Err(SealError::Damaged));
        // Another key: told apart by its id, before any decryption.
        let other = SecretsKey::generate();
        let err = other.open("STRIPE_KEY", &sealed).unwrap_err();
        assert!(matches!(err, SealError::WrongKey { .. }));
        assert!(!err.to_string().contains("sk_live"));
        // A flipped bit.
        let mut damaged = sealed.clone();
        *damaged.last_mut().unwrap() ^= 1;
        assert_eq!(key.open("STRIPE_KEY", &damaged), Err(SealError::Damaged));
        assert_eq!(key.open("STRIPE_KEY", b"plain text"), Err(SealError::Damaged));
    }

    #[test]
    fn keys_round_trip_through_base64_and_files() {
        let key = SecretsKey::generate();
        let again = SecretsKey::from_base64(&format!("  {}\n", key.to_base64())).unwrap();
        assert_eq!(again.id_hex(), key.id_hex());
        assert!(SecretsKey::from_base64("c2hvcnQ=").unwrap_err().contains("5 bytes"));
        assert!(SecretsKey::from_base64("not base64!").is_err());
        assert_ne!(key.derive("a"), key.derive("b"));

        let dir = std::env::temp_dir().join(format!("svc-seal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("secrets.key");
        let made = create_key_file(&path).unwrap();
        assert_eq!(read_key_file(&path).unwrap().id_hex(), made.id_hex());
        assert!(create_key_file(&path).is_err(), "never overwrites a key");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
