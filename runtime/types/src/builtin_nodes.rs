//! The built-in node types of a flow, one row each: what the reader accepts, what the
//! flow JSON Schema says, what the Builder's palette and inspector show and write, what
//! the checker hints, and what the metrics count are all derived from [`NODE_TYPES`].
//! Adding a built-in node type starts with a row here (ARCHITECTURE.md, "To add a
//! built-in node type").
//!
//! A row is data only (this crate is linked into every node crate): the reader, the
//! checker and the emitter still give each type its own code, and a test of each of them
//! fails when a type has no row or a row no code.

/// One built-in node type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeType {
    /// The flow's `type:` (`rate-limit`).
    pub type_name: &'static str,
    /// Its name in the Builder and the schema (`Rate Limit`).
    pub label: &'static str,
    /// Its short name on a route's badge in the Builder's list (`Rate limit`).
    pub badge: &'static str,
    /// `protection`, `code` or `response`.
    pub category: &'static str,
    /// One sentence for the palette.
    pub description: &'static str,
    /// The id the Builder gives a new node of this type (`limit`, then `limit-2`, …);
    /// `None` for a code node, whose id comes from its node key.
    pub default_id: Option<&'static str>,
    /// The sequence outputs, in the order they are drawn and counted.
    pub outputs: &'static [Output],
    /// The data outputs a built-in node gives the nodes after it (text each), as
    /// `<id>.<output>`: Check API Key's `user`. A code node's come from its definition.
    pub data_outputs: &'static [&'static str],
    /// Its settings (keys of the node's mapping other than `type`, `description` and the
    /// outputs), in the order the schema lists them.
    pub settings: &'static [Setting],
    /// The `check` label of `svc_protection_outcomes_total` (protections only).
    pub metric_check: Option<&'static str>,
    /// Whether passing it (its first output) authenticates the caller: a write route
    /// needs one of these before it answers 2xx (W0701).
    pub authenticates: bool,
}

/// A sequence output of a built-in node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Output {
    /// Its key in the flow, which is also its metric `outcome`.
    pub pin: &'static str,
    /// For the output a failed check takes: the status the node it leads to usually
    /// answers (a Rate Limit's `sequence-limited` leads to a 429).
    pub failure_status: Option<u16>,
    /// Whether the flow may leave it unwired (a code node's `on_fail`: failures then
    /// answer 500; Check JWT's `forbidden`: `invalid` then takes those tokens). The
    /// checker reports every other unwired output.
    pub optional: bool,
}

/// A setting of a built-in node: a key of its mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    pub key: &'static str,
    /// Whether a node must set it.
    pub required: bool,
    /// Its JSON Schema (JSON text: a fragment of `docs/schemas/flow.schema.json`).
    pub schema: &'static str,
    /// What a new node from the Builder's palette holds for it (JSON text), if anything.
    pub new_value: Option<&'static str>,
    /// How the Builder's inspector edits it, if it does.
    pub inspector: Option<Field>,
}

/// A setting as the Builder's inspector shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Where the form shows it, among the node's fields.
    pub position: u8,
    pub label: &'static str,
    pub kind: FieldKind,
    /// For an optional setting: what the node does when it is left out.
    pub unset: Option<&'static str>,
}

/// What a field of the inspector holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A whole number, 1 or more.
    Count,
    /// A rate-limit window (`30s`, `1m`, `minute`).
    Duration,
    /// One of these values.
    Choice(&'static [&'static str]),
    /// An HTTP status, 100 to 599.
    Status,
    /// A list of allowed origins.
    Origins,
    /// A list of header names.
    Headers,
    /// A list of names or URLs (audiences, scopes, algorithms), comma-separated.
    Names,
    /// Text.
    Text,
}

impl FieldKind {
    /// The kind's name as the Builder's page knows it.
    pub fn name(self) -> &'static str {
        match self {
            FieldKind::Count => "count",
            FieldKind::Duration => "duration",
            FieldKind::Choice(_) => "choice",
            FieldKind::Status => "status",
            FieldKind::Origins => "origins",
            FieldKind::Headers => "headers",
            FieldKind::Names => "names",
            FieldKind::Text => "text",
        }
    }

    /// Whether the field holds a list (the form edits it comma-separated).
    pub fn is_list(self) -> bool {
        matches!(self, FieldKind::Origins | FieldKind::Headers | FieldKind::Names)
    }

    /// The values a [`FieldKind::Choice`] takes.
    pub fn choices(self) -> &'static [&'static str] {
        match self {
            FieldKind::Choice(values) => values,
            _ => &[],
        }
    }
}

const fn field(position: u8, label: &'static str, kind: FieldKind, unset: Option<&'static str>) -> Option<Field> {
    Some(Field {
        position,
        label,
        kind,
        unset,
    })
}

const fn setting(key: &'static str, schema: &'static str) -> Setting {
    Setting {
        key,
        required: false,
        schema,
        new_value: None,
        inspector: None,
    }
}

/// The values `on_store_error` takes, in the order the Builder offers them.
pub const ON_STORE_ERROR: &[&str] = &["open", "closed", "local"];

pub const CHECK_ORIGIN: NodeType = NodeType {
    type_name: "check-origin",
    label: "Check Origin",
    badge: "Origin",
    category: "protection",
    description: "Lets browser requests through only from the origins listed (CORS); answers preflights.",
    default_id: Some("origin"),
    outputs: &[
        Output {
            pin: "allowed",
            failure_status: None,
            optional: false,
        },
        Output {
            pin: "blocked",
            failure_status: Some(403),
            optional: false,
        },
    ],
    data_outputs: &[],
    settings: &[
        Setting {
            required: true,
            new_value: Some(r#"["https://app.example.com"]"#),
            inspector: field(0, "allowed origins", FieldKind::Origins, None),
            ..setting(
                "allowed_origins",
                r#"{
                    "type": "array",
                    "minItems": 1,
                    "items": { "type": "string" },
                    "description": "Exact origins (`https://app.example.com`) or wildcard subdomains (`https://*.example.com`)."
                }"#,
            )
        },
        Setting {
            inspector: field(
                3,
                "without an Origin header",
                FieldKind::Choice(&["allow", "block"]),
                Some("allow (not a browser's cross-origin request)"),
            ),
            ..setting(
                "missing_origin",
                r#"{ "enum": ["allow", "block"], "default": "allow" }"#,
            )
        },
        Setting {
            inspector: field(
                1,
                "allowed headers",
                FieldKind::Headers,
                Some("only the CORS-safelisted headers"),
            ),
            ..setting(
                "allowed_headers",
                r#"{ "type": "array", "items": { "type": "string" } }"#,
            )
        },
        setting(
            "expose_headers",
            r#"{ "type": "array", "items": { "type": "string" } }"#,
        ),
        setting("allow_credentials", r#"{ "type": "boolean", "default": false }"#),
        Setting {
            inspector: field(
                2,
                "preflight max age (seconds)",
                FieldKind::Count,
                Some("the browser's default"),
            ),
            ..setting("max_age", r#"{ "type": "integer", "minimum": 0 }"#)
        },
    ],
    metric_check: Some("check_origin"),
    authenticates: false,
};

pub const RATE_LIMIT: NodeType = NodeType {
    type_name: "rate-limit",
    label: "Rate Limit",
    badge: "Rate limit",
    category: "protection",
    description: "Allows `limit` requests per `window` for each IP, user or API key.",
    default_id: Some("limit"),
    outputs: &[
        Output {
            pin: "sequence-ok",
            failure_status: None,
            optional: false,
        },
        Output {
            pin: "sequence-limited",
            failure_status: Some(429),
            optional: false,
        },
    ],
    data_outputs: &[],
    settings: &[
        Setting {
            required: true,
            new_value: Some("60"),
            inspector: field(0, "limit", FieldKind::Count, None),
            ..setting("limit", r#"{ "type": "integer", "minimum": 1 }"#)
        },
        Setting {
            required: true,
            new_value: Some(r#""1m""#),
            inspector: field(1, "window", FieldKind::Duration, None),
            ..setting(
                "window",
                r#"{
                    "description": "`30s`, `15m`, `1h`, `1d`, `second`, `minute`, `hour` or `day`; up to `366d`.",
                    "type": "string",
                    "pattern": "^([0-9]+[smhd]|second|minute|hour|day)$"
                }"#,
            )
        },
        Setting {
            required: true,
            new_value: Some(r#""ip""#),
            inspector: field(2, "by", FieldKind::Choice(&["ip", "api-key", "user"]), None),
            ..setting("by", r#"{ "enum": ["ip", "user", "api-key"] }"#)
        },
        Setting {
            inspector: field(
                3,
                "on store error",
                FieldKind::Choice(ON_STORE_ERROR),
                Some("the server's policy (--rate-limit-failure)"),
            ),
            ..setting(
                "on_store_error",
                r#"{
                    "description": "When the shared rate-limit store (Redis) cannot answer: `local` counts in this instance, `open` lets the request through, `closed` answers 503. Default: the server's --rate-limit-failure.",
                    "enum": ["local", "open", "closed"]
                }"#,
            )
        },
    ],
    metric_check: Some("rate_limit"),
    authenticates: false,
};

/// A credential check's outputs: `valid`, and `invalid`, which usually answers 401.
const VALID_OR_INVALID: &[Output] = &[
    Output {
        pin: "valid",
        failure_status: None,
        optional: false,
    },
    Output {
        pin: "invalid",
        failure_status: Some(401),
        optional: false,
    },
];

pub const CHECK_API_KEY: NodeType = NodeType {
    type_name: "check-api-key",
    label: "Check API Key",
    badge: "API key",
    category: "protection",
    description: "Lets a request through with an active API key of the workspace; gives the key's owner as `user`.",
    default_id: Some("auth"),
    outputs: VALID_OR_INVALID,
    data_outputs: &["user", "key_name", "key_id"],
    settings: &[Setting {
        required: true,
        new_value: Some(r#""header-x-api-key""#),
        inspector: field(0, "key location", FieldKind::Text, None),
        ..setting(
            "location",
            r#"{
                "type": "string",
                "description": "header-x-api-key, authorization-bearer, header:<Name>, or query:<name> (discouraged).",
                "pattern": "^(header-x-api-key|authorization-bearer|bearer|header:[!#$%&'*+.^_`|~0-9A-Za-z-]+|query:.+)$"
            }"#,
        )
    }],
    metric_check: Some("check_api_key"),
    authenticates: true,
};

/// The webhook providers Check Signature knows, each signing as its documentation says
/// (`runtime/server/src/signature.rs`).
pub const SIGNATURE_PRESETS: &[&str] = &["github", "stripe", "slack", "shopify", "standard-webhooks"];

pub const CHECK_SIGNATURE: NodeType = NodeType {
    type_name: "check-signature",
    label: "Check Signature",
    badge: "Signed",
    category: "protection",
    description: "Lets a webhook through when its provider signed its exact bytes (GitHub, Stripe, Slack, Shopify, Standard Webhooks), recently and once.",
    default_id: Some("signature"),
    outputs: VALID_OR_INVALID,
    data_outputs: &[],
    settings: &[
        Setting {
            required: true,
            new_value: Some(r#""github""#),
            inspector: field(0, "provider", FieldKind::Choice(SIGNATURE_PRESETS), None),
            ..setting(
                "preset",
                r#"{
                    "description": "Whose signatures: `github` (X-Hub-Signature-256), `stripe` (Stripe-Signature), `slack` (X-Slack-Signature), `shopify` (X-Shopify-Hmac-Sha256) or `standard-webhooks` (webhook-signature).",
                    "enum": ["github", "stripe", "slack", "shopify", "standard-webhooks"]
                }"#,
            )
        },
        Setting {
            required: true,
            new_value: Some(r#"["WEBHOOK_SECRET"]"#),
            inspector: field(1, "secrets", FieldKind::Names, None),
            ..setting(
                "secrets",
                r#"{
                    "type": "array",
                    "minItems": 1,
                    "items": { "type": "string" },
                    "description": "The secrets (declared in the config, set with `svc secrets`) a signature may be made with: list two while one is rotated."
                }"#,
            )
        },
        Setting {
            inspector: field(2, "tolerance", FieldKind::Duration, Some("5m")),
            ..setting(
                "tolerance",
                r#"{
                    "description": "How old a signed timestamp may be (Stripe, Slack, Standard Webhooks): `30s` to `1h`. Default `5m`.",
                    "type": "string",
                    "pattern": "^([0-9]+[smh]|second|minute|hour)$"
                }"#,
            )
        },
    ],
    metric_check: Some("check_signature"),
    authenticates: true,
};

/// The JOSE algorithms Check JWT verifies with (`alg`), public-key ones first.
pub const JWT_ALGORITHMS: &[&str] = &[
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA", "HS256", "HS384", "HS512",
];

/// The algorithms a Check JWT node accepts when it names none: the asymmetric ones
/// identity providers sign with (HMAC needs a secret and is named explicitly).
pub const JWT_DEFAULT_ALGORITHMS: &[&str] = &["RS256", "PS256", "ES256", "EdDSA"];

/// Whether Check JWT may take `url` as an issuer or fetch keys from it: `https`, or
/// `http` to a loopback address (a provider run for development). One rule for `svc check`
/// (the node's URLs) and the server (the `jwks_uri` a discovery document names).
pub fn jwt_url_allowed(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    match scheme.to_ascii_lowercase().as_str() {
        "https" => !name.is_empty(),
        "http" => {
            name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
        }
        _ => false,
    }
}

pub const CHECK_JWT: NodeType = NodeType {
    type_name: "check-jwt",
    label: "Check JWT",
    badge: "JWT",
    category: "protection",
    description: "Lets a request through with a bearer token an identity provider signed (OIDC, JWKS); gives its `subject` and `claims`.",
    default_id: Some("token"),
    outputs: &[
        Output {
            pin: "valid",
            failure_status: None,
            optional: false,
        },
        Output {
            pin: "invalid",
            failure_status: Some(401),
            optional: false,
        },
        Output {
            pin: "forbidden",
            failure_status: Some(403),
            optional: true,
        },
    ],
    data_outputs: &["subject"],
    settings: &[
        Setting {
            required: true,
            new_value: Some(r#""https://id.example.com/""#),
            inspector: field(0, "issuer", FieldKind::Text, None),
            ..setting(
                "issuer",
                r#"{
                    "type": "string",
                    "description": "The `iss` tokens carry: the provider's issuer URL (https; http only to a loopback address). Its OpenID Connect discovery document gives the keys unless `jwks_url`, `jwks` or `secret` does."
                }"#,
            )
        },
        Setting {
            required: true,
            new_value: Some(r#"["https://api.example.com"]"#),
            inspector: field(1, "audiences", FieldKind::Names, None),
            ..setting(
                "audiences",
                r#"{
                    "type": "array",
                    "minItems": 1,
                    "items": { "type": "string" },
                    "description": "A token's `aud` must name one of these."
                }"#,
            )
        },
        Setting {
            inspector: field(2, "token location", FieldKind::Text, Some("Authorization: Bearer")),
            ..setting(
                "location",
                r#"{
                    "type": "string",
                    "description": "authorization-bearer (default), header:<Name>, cookie:<name>, or query:<name> (discouraged).",
                    "pattern": "^(authorization-bearer|bearer|header:[!#$%&'*+.^_`|~0-9A-Za-z-]+|cookie:[!#$%&'*+.^_`|~0-9A-Za-z-]+|query:.+)$"
                }"#,
            )
        },
        setting(
            "jwks_url",
            r#"{ "type": "string", "description": "The provider's JWK set (https), instead of the one its discovery document names." }"#,
        ),
        setting(
            "jwks",
            r#"{
                "type": "object",
                "required": ["keys"],
                "properties": { "keys": { "type": "array", "items": { "type": "object" } } },
                "description": "A JWK set given here, for providers without discovery."
            }"#,
        ),
        setting(
            "public_key",
            r#"{ "type": "string", "description": "Public keys in PEM (`-----BEGIN PUBLIC KEY-----` blocks: RSA, EC P-256/P-384, Ed25519), for providers without a JWK set." }"#,
        ),
        setting(
            "secret",
            r#"{ "type": "string", "description": "The secret (declared in config, set with `svc secrets`) HS256/HS384/HS512 tokens are signed with." }"#,
        ),
        Setting {
            inspector: field(5, "algorithms", FieldKind::Names, Some("RS256, PS256, ES256, EdDSA")),
            ..setting(
                "algorithms",
                r#"{
                "type": "array",
                "minItems": 1,
                "items": { "enum": ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA", "HS256", "HS384", "HS512"] },
                "description": "The `alg`s accepted. Default: RS256, PS256, ES256, EdDSA (HS256 only with `secret`; `none` never)."
            }"#,
            )
        },
        Setting {
            inspector: field(3, "clock leeway (seconds)", FieldKind::Count, Some("60")),
            ..setting(
                "leeway",
                r#"{ "type": "integer", "minimum": 0, "maximum": 600, "default": 60 }"#,
            )
        },
        Setting {
            inspector: field(4, "required scopes", FieldKind::Names, Some("none")),
            ..setting(
                "required_scopes",
                r#"{ "type": "array", "items": { "type": "string" }, "description": "Each must be in the token's `scope` or `scp`; a token without one takes `forbidden` (else `invalid`)." }"#,
            )
        },
        setting(
            "required_claims",
            r#"{ "type": "array", "items": { "type": "string" }, "description": "Claims a token must carry (not null)." }"#,
        ),
        setting(
            "claims",
            r#"{ "type": "string", "description": "The structure the token's claims are read as: `<id>.claims` has its type." }"#,
        ),
    ],
    metric_check: Some("check_jwt"),
    authenticates: true,
};

pub const CODE: NodeType = NodeType {
    type_name: "code",
    label: "Code node",
    badge: "Code",
    category: "code",
    description: "Runs a code node of the project's (Rust or TypeScript) with its inputs wired or inline.",
    default_id: None,
    outputs: &[
        Output {
            pin: "next",
            failure_status: None,
            optional: false,
        },
        Output {
            pin: "on_fail",
            failure_status: None,
            optional: true,
        },
    ],
    data_outputs: &[],
    settings: &[
        Setting {
            required: true,
            ..setting(
                "node",
                r#"{
                    "type": "string",
                    "description": "The node key: <namespace>.<node-name>.",
                    "pattern": "^[a-z][a-z0-9]*(-[a-z0-9]+)*\\.[a-z][a-z0-9]*(-[a-z0-9]+)*$"
                }"#,
            )
        },
        setting(
            "inputs",
            r##"{ "type": "object", "additionalProperties": { "$ref": "#/$defs/binding" } }"##,
        ),
    ],
    metric_check: None,
    authenticates: false,
};

pub const RETURN_JSON: NodeType = NodeType {
    type_name: "return-json",
    label: "Return JSON",
    badge: "Response",
    category: "response",
    description: "Answers the request: a status, headers, and a JSON body of literals and wired values.",
    default_id: Some("respond"),
    outputs: &[],
    data_outputs: &[],
    settings: &[
        Setting {
            required: true,
            new_value: Some("200"),
            inspector: field(0, "status", FieldKind::Status, None),
            ..setting("status", r#"{ "type": "integer", "minimum": 100, "maximum": 599 }"#)
        },
        setting("body", r##"{ "$ref": "#/$defs/template" }"##),
        setting(
            "headers",
            r##"{ "type": "object", "additionalProperties": { "$ref": "#/$defs/binding" } }"##,
        ),
    ],
    metric_check: None,
    authenticates: false,
};

/// Every built-in node type, in the order the palette and the schema list them.
pub const NODE_TYPES: &[NodeType] = &[
    CHECK_ORIGIN,
    RATE_LIMIT,
    CHECK_API_KEY,
    CHECK_JWT,
    CHECK_SIGNATURE,
    CODE,
    RETURN_JSON,
];

/// The row of `type_name`.
pub fn node_type(type_name: &str) -> Option<&'static NodeType> {
    NODE_TYPES.iter().find(|t| t.type_name == type_name)
}

/// The JSON Schema of a sequence output (an edge to another node).
pub const OUTPUT_SCHEMA: &str = r##"{ "$ref": "#/$defs/edge" }"##;

impl NodeType {
    /// Every key a node of this type takes: `type`, `description`, its settings and its
    /// outputs, in the schema's order.
    pub fn keys(&self) -> Vec<&'static str> {
        let mut keys = vec!["type", "description"];
        keys.extend(self.settings.iter().map(|s| s.key));
        keys.extend(self.outputs.iter().map(|o| o.pin));
        keys
    }

    /// A new node of this type as the Builder's palette adds it: its `type`, a code
    /// node's `node` (`node_key`; `None` for a code node without one), and the settings
    /// a new node holds, in the schema's order.
    pub fn new_node(&self, node_key: Option<&str>) -> Option<serde_json::Map<String, serde_json::Value>> {
        let mut node = serde_json::Map::new();
        node.insert("type".into(), self.type_name.into());
        if self.default_id.is_none() {
            node.insert("node".into(), node_key?.into());
        }
        for setting in self.settings {
            if let Some(value) = setting.new_value {
                node.insert(
                    setting.key.into(),
                    serde_json::from_str(value).expect("the table's values are JSON (tested)"),
                );
            }
        }
        Some(node)
    }

    /// The setting `key`.
    pub fn setting(&self, key: &str) -> Option<&'static Setting> {
        self.settings.iter().find(|s| s.key == key)
    }

    /// The settings the inspector edits, in the form's order.
    pub fn inspector_fields(&self) -> Vec<(&'static Setting, Field)> {
        let mut fields: Vec<(&'static Setting, Field)> = self
            .settings
            .iter()
            .filter_map(|s| s.inspector.map(|f| (s, f)))
            .collect();
        fields.sort_by_key(|(_, f)| f.position);
        fields
    }

    /// The output a failed check takes, and the status its answer usually has.
    pub fn failure_output(&self) -> Option<(&'static str, u16)> {
        self.outputs.iter().find_map(|o| Some((o.pin, o.failure_status?)))
    }

    /// The id a new node of this type gets in `taken`'s flow: the row's default id (or
    /// `from_key`'s last part, for a code node), then `-2`, `-3`, … until one is free.
    pub fn fresh_id(&self, from_key: Option<&str>, taken: impl Fn(&str) -> bool) -> String {
        let base = match (self.default_id, from_key) {
            (Some(id), _) => id.to_string(),
            (None, Some(key)) => key.rsplit('.').next().unwrap_or(key).to_string(),
            (None, None) => "node".to_string(),
        };
        if !taken(&base) {
            return base;
        }
        (2..)
            .map(|n| format!("{base}-{n}"))
            .find(|id| !taken(id))
            .expect("a free id")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jwt_url_is_https_or_loopback_http() {
        for ok in [
            "https://id.example.com/",
            "http://127.0.0.1:8080/jwks",
            "http://localhost/x",
            "http://[::1]:80/",
        ] {
            assert!(jwt_url_allowed(ok), "{ok}");
        }
        for no in [
            "http://id.example.com/",
            "http://127.0.0.1.evil.example/",
            "file:///etc/passwd",
            "https://",
            "id.example.com",
        ] {
            assert!(!jwt_url_allowed(no), "{no}");
        }
    }

    /// Every row's JSON texts are JSON, every type name and key is written once, and a
    /// new node holds every required setting except a code node's key (which the
    /// Builder is given).
    #[test]
    fn every_row_is_whole() {
        let mut names = std::collections::BTreeSet::new();
        for t in NODE_TYPES {
            assert!(names.insert(t.type_name), "{} twice", t.type_name);
            let keys = t.keys();
            let unique: std::collections::BTreeSet<_> = keys.iter().collect();
            assert_eq!(unique.len(), keys.len(), "{}: a key twice", t.type_name);
            for s in t.settings {
                serde_json::from_str::<serde_json::Value>(s.schema)
                    .unwrap_or_else(|e| panic!("{}.{}: {e}", t.type_name, s.key));
                if let Some(v) = s.new_value {
                    serde_json::from_str::<serde_json::Value>(v).unwrap();
                }
                if s.required && t.default_id.is_some() {
                    assert!(s.new_value.is_some(), "{}.{} new nodes lack it", t.type_name, s.key);
                }
            }
            let positions: Vec<u8> = t.inspector_fields().iter().map(|(_, f)| f.position).collect();
            assert_eq!(
                positions,
                (0..positions.len() as u8).collect::<Vec<_>>(),
                "{}",
                t.type_name
            );
            assert_eq!(t.metric_check.is_some(), t.category == "protection", "{}", t.type_name);
        }
    }

    #[test]
    fn fresh_ids_count_up_from_the_default() {
        let taken = |id: &str| ["limit", "limit-2"].contains(&id);
        assert_eq!(RATE_LIMIT.fresh_id(None, taken), "limit-3");
        assert_eq!(CHECK_ORIGIN.fresh_id(None, taken), "origin");
        assert_eq!(CODE.fresh_id(Some("shop.price-order"), taken), "price-order");
    }
}
