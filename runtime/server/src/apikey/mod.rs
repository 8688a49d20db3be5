//! Check API Key: where keys are read from, and how they are verified.
//!
//! Verification never touches the database: the server keeps an index of key hashes in
//! memory, reloaded whenever the store's key revision changes (polled every 500 ms), so a
//! revoked key stops working within a second, without a restart. Expiry is checked on
//! every request against the clock.

pub mod format;
pub mod lookup;

use http::HeaderMap;
use parking_lot::RwLock;
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// Where Check API Key reads the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyLocation {
    /// `X-API-Key`.
    HeaderXApiKey,
    /// `Authorization: Bearer <key>`.
    AuthorizationBearer,
    /// A custom header (lowercase name).
    Header(&'static str),
    /// A query parameter (discouraged: URLs end up in logs).
    Query(&'static str),
    /// A cookie (Check JWT only: a token a browser app keeps in a cookie).
    Cookie(&'static str),
}

impl KeyLocation {
    /// The key presented by a request, if exactly one is present, as bytes: keys are
    /// ASCII, and whatever else was sent is refused by the format check, so the value is
    /// never decoded as text first.
    pub fn extract<'a>(&self, headers: &'a HeaderMap, query: Option<&'a str>) -> Option<Cow<'a, [u8]>> {
        const X_API_KEY: http::HeaderName = http::HeaderName::from_static("x-api-key");
        fn one_header(headers: &HeaderMap, name: impl http::header::AsHeaderName) -> Option<&[u8]> {
            let mut values = headers.get_all(name).iter();
            let first = values.next()?;
            if values.next().is_some() {
                return None;
            }
            Some(first.as_bytes().trim_ascii())
        }
        match self {
            KeyLocation::HeaderXApiKey => one_header(headers, X_API_KEY).map(Cow::Borrowed),
            KeyLocation::Header(name) => one_header(headers, *name).map(Cow::Borrowed),
            KeyLocation::AuthorizationBearer => {
                let v = one_header(headers, http::header::AUTHORIZATION)?;
                let space = v.iter().position(|&b| b == b' ')?;
                let (scheme, token) = (&v[..space], &v[space + 1..]);
                scheme
                    .eq_ignore_ascii_case(b"bearer")
                    .then(|| Cow::Borrowed(token.trim_ascii()))
            }
            KeyLocation::Query(name) => {
                let mut found = None;
                for (k, v) in url::form_urlencoded::parse(query?.as_bytes()) {
                    if k == *name {
                        if found.is_some() {
                            return None;
                        }
                        found = Some(Cow::Owned(v.into_owned().into_bytes()));
                    }
                }
                found
            }
            KeyLocation::Cookie(name) => {
                // `Cookie: a=1; token=…`, possibly over several headers; the same name
                // twice is ambiguous, so refused.
                let mut found = None;
                for value in headers.get_all(http::header::COOKIE) {
                    for pair in value.as_bytes().split(|&b| b == b';') {
                        let pair = pair.trim_ascii();
                        let Some(eq) = pair.iter().position(|&b| b == b'=') else {
                            continue;
                        };
                        if &pair[..eq] == name.as_bytes() {
                            if found.is_some() {
                                return None;
                            }
                            found = Some(Cow::Borrowed(pair[eq + 1..].trim_ascii()));
                        }
                    }
                }
                found
            }
        }
    }

    /// The `WWW-Authenticate` challenge of a 401 for this location.
    pub fn challenge(&self, realm: &str) -> String {
        match self {
            KeyLocation::AuthorizationBearer => format!("Bearer realm=\"{realm}\""),
            KeyLocation::HeaderXApiKey => format!("ApiKey realm=\"{realm}\", header=\"X-API-Key\""),
            KeyLocation::Header(name) => format!("ApiKey realm=\"{realm}\", header=\"{name}\""),
            KeyLocation::Query(name) => format!("ApiKey realm=\"{realm}\", query=\"{name}\""),
            KeyLocation::Cookie(name) => format!("ApiKey realm=\"{realm}\", cookie=\"{name}\""),
        }
    }

    /// Names to strip from `ctx.request` so node code never sees the key.
    pub fn header_name(&self) -> Option<&'static str> {
        match self {
            KeyLocation::HeaderXApiKey => Some("x-api-key"),
            KeyLocation::AuthorizationBearer => Some("authorization"),
            KeyLocation::Header(name) => Some(name),
            KeyLocation::Query(_) => None,
            // Always hidden from nodes, whatever its cookies.
            KeyLocation::Cookie(_) => Some("cookie"),
        }
    }
}

/// A stored API key (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    pub id: String,
    pub name: String,
    /// The `user` identity.
    pub owner: String,
    /// `svck_2Zb8…`, to recognise a key in lists.
    pub prefix: String,
    pub hash: [u8; 32],
    /// Unix seconds.
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

impl KeyRecord {
    /// A new random key and its record (what is stored: the hash, never the key),
    /// created at `now`. The key is shown once, to whoever asked for it.
    pub fn issue(name: &str, owner: &str, now: i64, expires_at: Option<i64>) -> (String, KeyRecord) {
        let key = format::generate();
        let record = KeyRecord {
            id: format::new_id(),
            name: name.to_string(),
            owner: owner.to_string(),
            prefix: format::display_prefix(&key),
            hash: format::hash(&key),
            created_at: now,
            expires_at,
            revoked_at: None,
        };
        (key, record)
    }

    pub fn status(&self, now: i64) -> KeyStatus {
        if self.revoked_at.is_some() {
            KeyStatus::Revoked
        } else if self.expires_at.is_some_and(|e| e <= now) {
            KeyStatus::Expired
        } else {
            KeyStatus::Active
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyStatus {
    Active,
    Expired,
    Revoked,
}

impl KeyStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyStatus::Active => "active",
            KeyStatus::Expired => "expired",
            KeyStatus::Revoked => "revoked",
        }
    }
}

/// Who a valid key belongs to: the outputs of Check API Key's `valid` path.
///
/// Shared with the key index: verifying a key allocates nothing, and handing the identity
/// on costs one reference count (read its fields through `Deref`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity(Arc<IdentityFields>);

#[derive(Debug, PartialEq, Eq)]
pub struct IdentityFields {
    pub key_id: String,
    pub key_name: String,
    pub user: String,
}

impl Identity {
    pub fn new(key_id: impl Into<String>, key_name: impl Into<String>, user: impl Into<String>) -> Self {
        Identity(Arc::new(IdentityFields {
            key_id: key_id.into(),
            key_name: key_name.into(),
            user: user.into(),
        }))
    }
}

impl std::ops::Deref for Identity {
    type Target = IdentityFields;

    fn deref(&self) -> &IdentityFields {
        &self.0
    }
}

/// Why a key was refused (logged; the response says only "invalid").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    Missing,
    Malformed,
    Unknown,
    Revoked,
    Expired,
}

impl Rejection {
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::Missing => "missing",
            Rejection::Malformed => "malformed",
            Rejection::Unknown => "unknown",
            Rejection::Revoked => "revoked",
            Rejection::Expired => "expired",
        }
    }
}

/// The in-memory index of keys a server verifies against.
///
/// A key's first verification follows the stored form: format and checksum, SHA-256, a
/// lookup by digest. A key found active is then remembered under a MAC of the presented
/// text (SipHash-2-4, 128 bits, with a key drawn at random when the index is made and
/// never shown), so that its next requests cost one MAC and one lookup instead. The MAC
/// is as good as a hash for storage (the key itself is never kept) and, being keyed, no
/// client can compute or aim at one. Only keys of the index can be remembered, each at
/// most once, so the cache is no larger than the index; a reload starts a new, empty one.
pub struct KeyIndex {
    current: RwLock<Generation>,
    /// SipHash-2-4 keyed with the index's random key (the key is all its state).
    mac: siphasher::sip128::SipHasher24,
    /// The store, asked about well-formed keys the index does not know (set by `serve`).
    miss: std::sync::OnceLock<lookup::MissLookup>,
}

/// The keys of one reload, and those of them verified since.
#[derive(Default)]
struct Generation {
    /// Counts reloads: a key verified against one generation is remembered only if no
    /// reload came between its lookup and the write.
    number: u64,
    by_hash: HashMap<[u8; 32], Indexed, BuildHasherDefault<DigestHasher>>,
    verified: HashMap<u128, Grant, BuildHasherDefault<DigestHasher>>,
}

/// What a key that is not revoked grants, until it expires: kept in the index, and
/// copied into the cache once the key is verified.
#[derive(Clone)]
struct Grant {
    expires_at: Option<i64>,
    identity: Identity,
}

impl Grant {
    /// The identity, unless the key has expired. Without an expiry the time does not
    /// matter (and reading the clock costs more than the rest of the lookup).
    fn at(&self, now: impl FnOnce() -> i64) -> Result<Identity, Rejection> {
        if self.expires_at.is_some_and(|e| e <= now()) {
            return Err(Rejection::Expired);
        }
        Ok(self.identity.clone())
    }
}

impl Default for KeyIndex {
    fn default() -> Self {
        let mut mac_key = [0u8; 16];
        getrandom::fill(&mut mac_key).expect("the operating system provides randomness");
        KeyIndex {
            current: RwLock::default(),
            mac: siphasher::sip128::SipHasher24::new_with_key(&mac_key),
            miss: std::sync::OnceLock::new(),
        }
    }
}

/// Hashes a SHA-256 digest (or a key's MAC) by folding its words: both are already
/// uniform, and no client can choose one (that would take a preimage, or the MAC key),
/// so a keyed hash would add a SipHash pass per request and no protection.
#[derive(Default)]
struct DigestHasher(u64);

impl std::hash::Hasher for DigestHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(17) ^ u64::from_le_bytes(word);
        }
    }

    fn write_u128(&mut self, n: u128) {
        self.0 = (n as u64) ^ ((n >> 64) as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// What verification needs of a key, built once per reload: small, so that a lookup
/// touches the bucket and little else (the full record stays in the store).
struct Indexed {
    revoked: bool,
    grant: Grant,
}

impl Indexed {
    /// A stored key as the index holds it, under its digest.
    fn from_record(r: KeyRecord) -> ([u8; 32], Indexed) {
        let indexed = Indexed {
            revoked: r.revoked_at.is_some(),
            grant: Grant {
                expires_at: r.expires_at,
                identity: Identity::new(r.id, r.name, r.owner),
            },
        };
        (r.hash, indexed)
    }
}

impl KeyIndex {
    pub fn new(records: Vec<KeyRecord>) -> Self {
        let index = KeyIndex::default();
        index.replace(records);
        index
    }

    /// Replaces every key (after a reload).
    pub fn replace(&self, records: Vec<KeyRecord>) {
        let map = records.into_iter().map(Indexed::from_record).collect();
        let mut current = self.current.write();
        *current = Generation {
            number: current.number + 1,
            by_hash: map,
            verified: HashMap::default(),
        };
    }

    /// Asks `lookup` about well-formed keys the index does not know, in
    /// [`KeyIndex::verify_or_look_up`]. Set once.
    pub fn look_up_misses_in(&self, lookup: lookup::MissLookup) {
        let _ = self.miss.set(lookup);
    }

    /// Adds one key (found in the store between reloads). The next reload replaces it
    /// with the store's view, as every other key.
    pub fn insert(&self, record: KeyRecord) {
        let (hash, indexed) = Indexed::from_record(record);
        self.current.write().by_hash.entry(hash).or_insert(indexed);
    }

    /// [`KeyIndex::verify_now`], and for a well-formed key the index does not know, one
    /// bounded lookup in the store (see [`lookup`]) before it is refused.
    pub async fn verify_or_look_up(&self, presented: Option<&[u8]>) -> Result<Identity, Rejection> {
        match (self.verify_now(presented), self.miss.get(), presented) {
            // Boxed: the lookup is a store query, far dearer than the allocation, and held
            // inline its future would make every route's request future larger for a
            // case that happens once per new key (axum copies that future on every request).
            (Err(Rejection::Unknown), Some(miss), Some(presented)) => Box::pin(self.look_up(miss, presented)).await,
            (verified, _, _) => verified,
        }
    }

    /// The slow path of [`KeyIndex::verify_or_look_up`]: the store's record of a key the
    /// index does not know, indexed, then verified.
    async fn look_up(&self, miss: &lookup::MissLookup, presented: &[u8]) -> Result<Identity, Rejection> {
        let record = miss.find(format::hash(presented)).await.ok_or(Rejection::Unknown)?;
        self.insert(record);
        self.verify_now(Some(presented))
    }

    pub fn len(&self) -> usize {
        self.current.read().by_hash.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Verifies a presented key at `now` (Unix seconds).
    ///
    /// Timing: the format check depends only on the presented text; both lookups compare
    /// values the caller cannot steer (the keyed MAC of remembered keys, then SHA-256
    /// digests), so their timing tells nothing about any key; the final digest comparison
    /// is constant-time.
    pub fn verify<K: AsRef<[u8]> + ?Sized>(&self, presented: Option<&K>, now: i64) -> Result<Identity, Rejection> {
        self.verify_at(presented.map(AsRef::as_ref), || now)
    }

    /// [`KeyIndex::verify`] now: the clock is read only for a key that can expire.
    pub fn verify_now(&self, presented: Option<&[u8]>) -> Result<Identity, Rejection> {
        self.verify_at(presented, unix_now)
    }

    fn verify_at(&self, presented: Option<&[u8]>, now: impl FnOnce() -> i64) -> Result<Identity, Rejection> {
        let presented = presented.ok_or(Rejection::Missing)?;
        // Text of the wrong length is no key at all: turned away before the MAC.
        if presented.len() != format::KEY_LEN {
            return Err(Rejection::Malformed);
        }
        let mac = self.mac(presented);
        let generation = self.current.read();
        if let Some(known) = generation.verified.get(&mac) {
            return known.at(now);
        }
        if !format::is_well_formed(presented) {
            return Err(Rejection::Malformed);
        }
        let digest = format::hash(presented);
        let (stored, entry) = generation.by_hash.get_key_value(&digest).ok_or(Rejection::Unknown)?;
        if !digests_equal(stored, &digest) {
            return Err(Rejection::Unknown);
        }
        if entry.revoked {
            return Err(Rejection::Revoked);
        }
        let identity = entry.grant.at(now)?;
        let (number, grant) = (generation.number, entry.grant.clone());
        drop(generation);
        // Remembering takes the write lock, once per key and reload; repeat requests then
        // take only the read lock. A reload in between (a new generation number) may have
        // revoked the key: it is then not remembered.
        let mut generation = self.current.write();
        if generation.number == number {
            generation.verified.insert(mac, grant);
        }
        Ok(identity)
    }

    /// The keyed MAC a verified key is remembered by.
    fn mac(&self, presented: &[u8]) -> u128 {
        self.mac.hash(presented).as_u128()
    }

    /// Keys remembered as verified in this generation (for tests).
    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.current.read().verified.len()
    }
}

/// Whether two digests are equal, in constant time: the words are XORed and ORed
/// together and compared once (one barrier instead of one per byte).
fn digests_equal(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let mut diff = 0u64;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let x = u64::from_le_bytes(x.try_into().expect("8 bytes"));
        let y = u64::from_le_bytes(y.try_into().expect("8 bytes"));
        diff |= x ^ y;
    }
    bool::from(diff.ct_eq(&0))
}

/// Unix seconds now.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn record(key: &str, expires_at: Option<i64>, revoked_at: Option<i64>) -> KeyRecord {
        KeyRecord {
            id: "key_1".into(),
            name: "ci".into(),
            owner: "alice".into(),
            prefix: format::display_prefix(key),
            hash: format::hash(key),
            created_at: 0,
            expires_at,
            revoked_at,
        }
    }

    #[test]
    fn verification_outcomes() {
        let good = format::generate();
        let index = KeyIndex::new(vec![record(&good, None, None)]);
        assert_eq!(&*index.verify(Some(&good), 100).unwrap().user, "alice");
        assert_eq!(index.verify(None::<&str>, 100), Err(Rejection::Missing));
        assert_eq!(index.verify(Some("nope"), 100), Err(Rejection::Malformed));
        assert_eq!(index.verify(Some(&format::generate()), 100), Err(Rejection::Unknown));
        let expired = format::generate();
        let revoked = format::generate();
        index.replace(vec![record(&expired, Some(50), None), record(&revoked, None, Some(10))]);
        assert_eq!(index.verify(Some(&expired), 100), Err(Rejection::Expired));
        assert_eq!(
            index.verify(Some(&expired), 49).map(|i| i.user.to_string()),
            Ok("alice".to_string())
        );
        assert_eq!(index.verify(Some(&revoked), 100), Err(Rejection::Revoked));
        assert_eq!(index.verify(Some(&good), 100), Err(Rejection::Unknown));
    }

    #[test]
    fn repeat_verifications_are_remembered_and_still_checked() {
        let (good, expiring, revoked) = (format::generate(), format::generate(), format::generate());
        let index = KeyIndex::new(vec![
            record(&good, None, None),
            record(&expiring, Some(50), None),
            record(&revoked, None, Some(10)),
        ]);
        // Rejected keys are never remembered, however often they come.
        for _ in 0..3 {
            assert_eq!(index.verify(Some(&format::generate()), 10), Err(Rejection::Unknown));
            assert_eq!(index.verify(Some("svck_nope"), 10), Err(Rejection::Malformed));
            assert_eq!(index.verify(Some(&revoked), 10), Err(Rejection::Revoked));
            assert_eq!(index.verify(Some(&expiring), 60), Err(Rejection::Expired));
        }
        assert_eq!(index.remembered(), 0);
        // Active keys are, once each.
        for _ in 0..3 {
            assert_eq!(&*index.verify(Some(&good), 10).unwrap().user, "alice");
            assert_eq!(&*index.verify(Some(&expiring), 10).unwrap().user, "alice");
        }
        assert_eq!(index.remembered(), 2);
        // A remembered key still expires.
        assert_eq!(index.verify(Some(&expiring), 50), Err(Rejection::Expired));
        // A key that differs in one character is not taken for a remembered one.
        let mut near = good.clone().into_bytes();
        near[10] = if near[10] == b'a' { b'b' } else { b'a' };
        let near = String::from_utf8(near).unwrap();
        assert!(index.verify(Some(&near), 10).is_err());
        // A reload forgets everything: a revoked key stops working at once.
        index.replace(vec![record(&good, None, Some(20)), record(&expiring, Some(50), None)]);
        assert_eq!(index.remembered(), 0);
        assert_eq!(index.verify(Some(&good), 30), Err(Rejection::Revoked));
        assert!(index.verify(Some(&expiring), 30).is_ok());
        // Two indexes remember under different MAC keys.
        assert_ne!(index.mac(good.as_bytes()), KeyIndex::default().mac(good.as_bytes()));
    }

    #[test]
    fn a_cookie_is_read_by_its_name_and_refused_when_given_twice() {
        let mut h = HeaderMap::new();
        h.append("cookie", "theme=dark; session= t1 ".parse().unwrap());
        let session = KeyLocation::Cookie("session");
        assert_eq!(session.extract(&h, None).as_deref(), Some(b"t1".as_slice()));
        assert_eq!(KeyLocation::Cookie("sess").extract(&h, None), None);
        h.append("cookie", "session=t2".parse().unwrap());
        assert_eq!(session.extract(&h, None), None);
    }

    #[test]
    fn extraction_from_every_location() {
        let mut h = HeaderMap::new();
        h.insert("x-api-key", "k1".parse().unwrap());
        h.insert("authorization", "bearer k2".parse().unwrap());
        h.insert("x-hooks-key", " k3 ".parse().unwrap());
        assert_eq!(
            KeyLocation::HeaderXApiKey.extract(&h, None).as_deref(),
            Some(b"k1".as_slice())
        );
        assert_eq!(
            KeyLocation::AuthorizationBearer.extract(&h, None).as_deref(),
            Some(b"k2".as_slice())
        );
        assert_eq!(
            KeyLocation::Header("x-hooks-key").extract(&h, None).as_deref(),
            Some(b"k3".as_slice())
        );
        assert_eq!(
            KeyLocation::Query("api_key")
                .extract(&h, Some("a=1&api_key=k%344"))
                .as_deref(),
            Some(b"k44".as_slice())
        );
        assert_eq!(
            KeyLocation::Query("api_key").extract(&h, Some("api_key=a&api_key=b")),
            None
        );
        h.append("x-api-key", "k9".parse().unwrap());
        assert_eq!(
            KeyLocation::HeaderXApiKey.extract(&h, None),
            None,
            "two keys are ambiguous"
        );
        let mut h = HeaderMap::new();
        h.insert("authorization", "Basic abc".parse().unwrap());
        assert_eq!(KeyLocation::AuthorizationBearer.extract(&h, None), None);
        h.insert("authorization", "  BEARER   k5 ".parse().unwrap());
        assert_eq!(
            KeyLocation::AuthorizationBearer.extract(&h, None).as_deref(),
            Some(b"k5".as_slice())
        );
        // Bytes that are not text reach the format check, which refuses them.
        h.insert("x-api-key", HeaderValue::from_bytes(b"svck_\xff").unwrap());
        let presented = KeyLocation::HeaderXApiKey.extract(&h, None).unwrap();
        assert_eq!(
            KeyIndex::default().verify(Some(&*presented), 0),
            Err(Rejection::Malformed)
        );
    }
}
