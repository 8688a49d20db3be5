// Types of @svc/sdk (spec §2.2–2.8, §9). The pins a node declares type its `ctx.inputs`,
// and `run` must return exactly its data outputs: a missing, extra or mistyped output
// is a compile error (test/types holds files that must fail to compile, and why).

// --- values ---------------------------------------------------------------------------

/** A JSON value: what flows through an `any` pin. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object: what flows through an `object` pin. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * The named structures of the project, by name. svc writes an augmentation of this
 * interface from `svc.config.ts` (`declare module "@svc/sdk" { interface Structures {…} }`)
 * so that `t.struct("Order")` is typed as an `Order`; a name it does not know is a
 * generic object here (and an error from `svc check`).
 */
export interface Structures {}
/** The named enums of the project, by name, each the union of its wire values. */
export interface Enums {}

type StructureValue<N extends string> = N extends keyof Structures ? Structures[N] : JsonObject;
type EnumValueOf<N extends string> = N extends keyof Enums ? Enums[N] : string;

// --- pins (spec §2.3–2.5) -------------------------------------------------------------

declare const pinState: unique symbol;

/**
 * A pin under construction. Its type parameters record what the pin carries, so that
 * `ctx.inputs` and `run`'s result are typed from the declaration:
 * - `V`: the value type;
 * - `Optional`, `HasDefault`: an optional pin without a default may be absent;
 * - `Sequence`: a `seq.in()` / `seq.out()` pin, which carries no value.
 */
export interface PinBuilder<
  V = unknown,
  Optional extends boolean = false,
  HasDefault extends boolean = false,
  Sequence extends boolean = false,
> {
  /** Type-level record of the pin; absent at run time. */
  readonly [pinState]?: { value: V; optional: Optional; hasDefault: HasDefault; sequence: Sequence };
  /** The type string this pin produces (`string`, `object:Order`, `type:array`, …). */
  readonly type: string;
  /** Marks the pin optional: an input may be absent, an output may be left out. */
  optional(): PinBuilder<V, true, HasDefault, Sequence>;
  /** Sets the help text the Builder shows. */
  description(text: string): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Sets the value used when the pin is left unwired: the input is then always present. */
  default(value: Sequence extends true ? never : V): PinBuilder<V, Optional, true, Sequence>;
  /** Marks the pin connect-only, with no inline value entry. */
  portOnly(enabled?: boolean): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Alias of `portOnly`. */
  pinOnly(enabled?: boolean): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Re-enables inline value entry on a port-only pin. */
  allowInlineValue(enabled?: boolean): PinBuilder<V, Optional, HasDefault, Sequence>;
  // Field constraints, as on a structure field (`FieldConstraints`): checked by
  // `svc check` against literals and defaults, and before the node runs against a wired
  // value its source does not already guarantee. On an array pin the array keywords
  // hold the array and the others each item.
  /** Numbers: at least `limit`. */
  minimum(limit: number): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Numbers: at most `limit`. */
  maximum(limit: number): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Numbers: greater than `limit`. */
  exclusiveMinimum(limit: number): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Numbers: less than `limit`. */
  exclusiveMaximum(limit: number): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Numbers: a multiple of `step` (greater than 0). */
  multipleOf(step: number): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Numbers: a whole number. */
  integer(): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Strings: at least `n` characters (Unicode code points). */
  minLength(n: number): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Strings: at most `n` characters (Unicode code points). */
  maxLength(n: number): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Strings: contains a match of this regular expression (`^…$` for the whole string). */
  pattern(pattern: string): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Strings: one of the formats svc checks. */
  format(format: NonNullable<FieldConstraints["format"]>): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Arrays: at least `n` items. */
  minItems(n: number): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Arrays: at most `n` items. */
  maxItems(n: number): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** Arrays: no item twice. */
  uniqueItems(): PinBuilder<V, Optional, HasDefault, Sequence>;
  /** The pin as it appears in a manifest. */
  toJSON(): PinManifest;
}

/** A data pin builder of any type. */
export type DataPin<V = any> = PinBuilder<V, boolean, boolean, false>;
/** A sequence pin builder. */
export type SequencePin = PinBuilder<never, false, false, true>;
/** Pins by id, in declaration order. */
export type PinMap = { readonly [id: string]: PinBuilder<any, boolean, boolean, boolean> };

/** Data pin type builders. */
export declare const t: {
  /** `string` */
  string(): PinBuilder<string>;
  /** `number` */
  number(): PinBuilder<number>;
  /** `boolean` */
  boolean(): PinBuilder<boolean>;
  /** `any`: an unrestricted value. */
  any(): PinBuilder<JsonValue>;
  /** `object`: a generic object. */
  object(): PinBuilder<JsonObject>;
  /** `object:<Name>`: an object of a named structure. */
  object<const N extends string>(name: N): PinBuilder<StructureValue<N>>;
  /** `object:<Name>`: the explicit structure alias; the name is required. */
  struct<const N extends string>(name: N): PinBuilder<StructureValue<N>>;
  /** `enum-value:<Name>`: a value of a named enum. */
  enumValue<const N extends string>(name: N): PinBuilder<EnumValueOf<N>>;
  /** `type:array`: an array of another builder's type. */
  array<V>(inner: DataPin<V>): PinBuilder<V[]>;
};

/** Sequence pin builders: port-only by default; they carry no value. */
export declare const seq: {
  /** A sequence input pin. */
  in(): SequencePin;
  /** A sequence output pin. */
  out(): SequencePin;
};

type DataIds<P> = { [K in keyof P]: P[K] extends PinBuilder<any, any, any, true> ? never : K }[keyof P];
type OptionalIds<P> = { [K in keyof P]: P[K] extends PinBuilder<any, true, false, false> ? K : never }[keyof P];
type ValueOf<B> = B extends PinBuilder<infer V, any, any, any> ? V : never;
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The values `ctx.inputs` holds for the given input pins. */
export type InputValues<P extends PinMap> = Simplify<
  { readonly [K in Exclude<DataIds<P>, OptionalIds<P>>]: ValueOf<P[K]> } & {
    readonly [K in OptionalIds<P>]?: ValueOf<P[K]>;
  }
>;

/** The object `run` returns for the given output pins: exactly the data outputs. */
export type OutputValues<P extends PinMap> = Simplify<
  { [K in Exclude<DataIds<P>, OptionalIds<P>>]: ValueOf<P[K]> } & {
    [K in OptionalIds<P>]?: ValueOf<P[K]> | null;
  }
>;

// --- the run context (spec §2.6) ------------------------------------------------------

/** Request metadata, present only when the runtime provides it. Credentials
 *  (`authorization`, `cookie`, the API key header) are never among the headers. */
export interface RequestMeta {
  readonly method?: string;
  readonly url?: string;
  /** Header names in lowercase. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Runtime metadata. Deployed: only `isDev`, `version` and `gitSha`. In local
 *  development it also mirrors the process environment. */
export interface RuntimeEnv {
  readonly isDev: boolean;
  readonly version: string;
  readonly gitSha: string;
  readonly [name: string]: string | boolean | undefined;
}

/** What `run(ctx)` can see and do. */
export interface CodeFunctionRunContext<I = Record<string, unknown>> {
  /** Resolved input values, keyed by pin id. */
  readonly inputs: I;
  /** Request metadata, when the runtime provides it. */
  readonly request?: RequestMeta;
  /** Runtime metadata (not the engine's environment). */
  readonly env: RuntimeEnv;
  /** Reads a secret declared in `svc.config.ts`. A secret with no value fails the node. */
  secret(name: string): string;
  /** Writes a debug line into the request's logs (`svc dev` prints them after each run). */
  log(...args: unknown[]): void;
  /** Fails the node with a message and an optional code, instead of returning partial output. */
  fail(message: string, code?: string): never;
}

// --- nodes (spec §2.2) ----------------------------------------------------------------

/** Keys of `R` (or of what the promise `R` resolves to) that are not declared outputs:
 *  each must be `never`, so returning one is a compile error that names it. */
type NoUndeclaredOutputs<R, Declared> = R extends PromiseLike<infer A>
  ? PromiseLike<A & { [K in Exclude<keyof A, Declared>]: never }>
  : { [K in Exclude<keyof R, Declared>]: never };

/** The object given to `defineCodeFunctionNode`. */
export interface CodeFunctionNodeDefinition<I extends PinMap, O extends PinMap, R> {
  /** Stable identifier, `<namespace>.<node-name>`; unchanged when `name` changes. */
  nodeKey: string;
  /** Builder label shown to users. */
  name: string;
  /** Short usage description. */
  description?: string;
  /** Category shown in the Builder (default `code-function`). */
  category?: string;
  /** Input pins. */
  inputs?: I;
  /** Output pins. */
  outputs?: O;
  /** Returns a plain object whose keys are exactly the declared data outputs. May be async. */
  run(ctx: CodeFunctionRunContext<InputValues<I>>): R;
}

/** A defined code node: its definition, with `category` defaulted. */
export interface CodeFunctionNode<I extends PinMap = PinMap, O extends PinMap = PinMap> {
  readonly nodeKey: string;
  readonly name: string;
  readonly description?: string;
  readonly category: string;
  readonly inputs: I;
  readonly outputs: O;
  run(ctx: CodeFunctionRunContext<InputValues<I>>): OutputValues<O> | PromiseLike<OutputValues<O>>;
}

/** Defines a code node. A node module default-exports exactly one of these. */
export declare function defineCodeFunctionNode<
  const I extends PinMap = {},
  const O extends PinMap = {},
  R extends OutputValues<O> | PromiseLike<OutputValues<O>> = OutputValues<O>,
>(definition: CodeFunctionNodeDefinition<I, O, R & NoUndeclaredOutputs<R, DataIds<O>>>): CodeFunctionNode<I, O>;

// --- manifests ------------------------------------------------------------------------

/** A pin in a manifest: its constraints follow its modifiers, in `CONSTRAINT_KEYS` order. */
export interface PinManifest extends FieldConstraints {
  type: string;
  items?: { type: string; items?: PinManifest["items"] };
  optional?: true;
  description?: string;
  default?: JsonValue;
  portOnly?: true;
  allowInlineValue?: true;
}

/** The publishable shape of a node, without `run`. */
export interface NodeManifest {
  nodeKey: string;
  name: string;
  description?: string;
  category: string;
  inputs: Record<string, PinManifest>;
  outputs: Record<string, PinManifest>;
}

/** The publishable manifest of a node: its definition without `run`. */
export declare function buildManifestFromNode(node: CodeFunctionNode<any, any>): NodeManifest;

// --- named assets (spec §2.7) ---------------------------------------------------------

declare const assetKind: unique symbol;

/** One value of an enum: a plain string, or a key with its wire value and label. */
export type EnumValueDefinition = string | { key: string; value: string; label?: string };

export interface EnumDefinition<N extends string = string> {
  readonly [assetKind]?: "enum";
  readonly name: N;
  readonly description?: string;
  readonly values: readonly EnumValueDefinition[];
}

/** What a valid value is, beyond its type: JSON Schema 2020-12's keywords, checked by
 *  `svc check` against every literal and by the server against every request. On an
 *  array field, `minItems`, `maxItems` and `uniqueItems` apply to the array and the
 *  others to each item. */
export interface FieldConstraints {
  /** Numbers: at least this. */
  readonly minimum?: number;
  /** Numbers: at most this. */
  readonly maximum?: number;
  /** Numbers: greater than this. */
  readonly exclusiveMinimum?: number;
  /** Numbers: less than this. */
  readonly exclusiveMaximum?: number;
  /** Numbers: a multiple of this (greater than 0). */
  readonly multipleOf?: number;
  /** Numbers: a whole number. */
  readonly integer?: boolean;
  /** Strings: at least this many characters (Unicode code points). */
  readonly minLength?: number;
  /** Strings: at most this many characters (Unicode code points). */
  readonly maxLength?: number;
  /** Strings: contains a match of this regular expression (write `^…$` for the whole
   *  string). Rust's `regex` syntax: no look-around or backreferences, since svc matches
   *  in linear time; `\d` and `\w` are Unicode-aware (write `[0-9]` for ASCII digits). */
  readonly pattern?: string;
  /** Strings: one of the formats svc checks. */
  readonly format?: "email" | "uri" | "uuid" | "date" | "date-time" | "ipv4" | "ipv6";
  /** Arrays: at least this many items. */
  readonly minItems?: number;
  /** Arrays: at most this many items. */
  readonly maxItems?: number;
  /** Arrays: no item twice. */
  readonly uniqueItems?: boolean;
}

/** Every constraint key with the kind of value it takes, in the order svc writes them. */
export declare const CONSTRAINT_KEYS: readonly (readonly [keyof FieldConstraints, "number" | "boolean" | "string"])[];

/** One field of a structure, with a raw type string (`string`, `enum-value:Color`,
 *  `object:Line:array`): not a `t.*` builder. Fields are optional unless `required`. */
export interface FieldDefinition extends FieldConstraints {
  readonly name: string;
  readonly type: string;
  readonly required?: boolean;
  readonly description?: string;
}

export interface StructureDefinition<N extends string = string> {
  readonly [assetKind]?: "structure";
  readonly name: N;
  readonly description?: string;
  readonly fields: readonly FieldDefinition[];
}

/** A secret requirement. It holds no value. */
export interface SecretDefinition<N extends string = string> {
  readonly [assetKind]?: "secret";
  readonly name: N;
  readonly description?: string;
  readonly required: boolean;
}

export type Asset = EnumDefinition | StructureDefinition | SecretDefinition;

/** A named set of string values. */
export declare function defineEnum<const N extends string>(definition: {
  name: N;
  description?: string;
  values: readonly EnumValueDefinition[];
}): EnumDefinition<N>;

/** A named object type. */
export declare function defineStructure<const N extends string>(definition: {
  name: N;
  description?: string;
  fields: readonly FieldDefinition[];
}): StructureDefinition<N>;

/** A secret requirement (required unless `required: false`). */
export declare function defineSecret<const N extends string>(definition: {
  name: N;
  description?: string;
  required?: boolean;
}): SecretDefinition<N>;

/** The project's assets, by kind. */
export interface Assets {
  enums: EnumDefinition[];
  structures: StructureDefinition[];
  secrets: SecretDefinition[];
}

/** Sorts a mixed list of enums, structures and secrets by kind, keeping their order. */
export declare function collectAssets(assets: readonly Asset[]): Assets;
