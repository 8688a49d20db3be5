// The project as `GET /api/project` answers it: the types of `compiler/src/builder/model.rs`
// as the page reads them. The page's modules are checked against these (`// @ts-check`,
// `tsc` in the Builder's tests), and the tests check every example's real answer against
// them too, so a field the server adds, drops or renames fails a test instead of a view.

export interface Model {
  /** The project's files' revision when it was read (`/api/project/revision`). */
  revision: string;
  project: ProjectInfo;
  routes: Route[];
  palette: PaletteNode[];
  /** The built-in node types, from svc's table of them. */
  nodeTypes: NodeTypeInfo[];
  assets: Assets;
  diagnostics: Diagnostic[];
}

export interface ProjectInfo {
  name: string;
  dir: string;
  errors: number;
  warnings: number;
}

export interface NodeTypeInfo {
  type: string;
  label: string;
  badge: string;
  /** `protection`, `code` or `response`. */
  category: string;
}

export interface Route {
  /** The flow's file name without `.yaml`. */
  name: string;
  file: string;
  /** The SHA-256 of the flow file: what edits are made against. */
  version: string;
  route: string;
  /** Where it is served (`/acme/shop/orders`). */
  path: string;
  methods: string[];
  summary: string | null;
  protections: string[];
  start: string;
  nodes: Node[];
  wires: Wire[];
}

export interface Node {
  id: string;
  type: string;
  label: string;
  category: string;
  description: string | null;
  nodeKey: string | null;
  language: "rust" | "typescript" | null;
  line: number;
  inputs: Pin[];
  outputs: Pin[];
  /** What the node is set to, as (label, value) rows. */
  config: [string, string][];
  settings: Setting[];
  /** svc could not read the node: drawn with its settings and edges as written. */
  unreadable?: true;
}

export interface Setting {
  key: string;
  label: string;
  kind: "count" | "duration" | "choice" | "status" | "origins" | "headers" | "names" | "text";
  /** As the flow writes it; `""` when it leaves the key out (`[]` for a list). */
  value: unknown;
  choices?: string[];
  unset?: string;
}

export interface Pin {
  id: string;
  /** `sequence`, or a type string (`string`, `object:Order`, …). */
  type: string;
  items: string | null;
  sequence: boolean;
  optional: boolean;
  description: string | null;
  checks: string | null;
  default: unknown;
  takesInline: boolean;
  value: unknown;
  line: number | null;
}

export interface Wire {
  kind: "sequence" | "data";
  from: End;
  to: End;
  text: string | null;
}

export interface End {
  node: string;
  pin: string;
  path: string[];
}

export interface PaletteNode {
  key: string;
  label: string;
  category: string;
  description: string | null;
  language: "built-in" | "rust" | "typescript";
  inputs: Pin[];
  outputs: Pin[];
}

export interface Assets {
  enums: EnumDefinition[];
  structures: StructureDefinition[];
  secrets: SecretDefinition[];
}

export interface EnumDefinition {
  name: string;
  description?: string;
  values: (string | { key: string; value: string; label?: string })[];
}

export interface StructureDefinition {
  name: string;
  description?: string;
  fields: FieldDefinition[];
}

export interface FieldDefinition {
  name: string;
  type: string;
  required?: true;
  description?: string;
  /** The constraints in words, when it has any. */
  checks?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  integer?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
}

export interface SecretDefinition {
  name: string;
  description?: string;
  required: boolean;
}

export interface Diagnostic {
  severity: "error" | "warning";
  code: string;
  name: string;
  message: string;
  file: string;
  line: number;
  column: number;
  endColumn: number;
  label: string | null;
  help: string | null;
  related: Place[];
  /** Where the Builder places it, when it is in a flow. */
  route?: string;
  node?: string;
  pin?: string;
}

export interface Place {
  file: string;
  line: number;
  column: number;
  endColumn: number;
  message: string | null;
}
