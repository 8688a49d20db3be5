// Types of @svc/sdk/testing: run a node's `run(ctx)` in a unit test.

import type { CodeFunctionNode, InputValues, OutputValues, PinMap, RequestMeta } from "./index.js";

/** What a run ended with: the outputs, or the node's `ctx.fail`; and its log lines. */
export type TestRun<O extends PinMap> =
  | { outputs: OutputValues<O>; failure?: undefined; logs: string[] }
  | { outputs?: undefined; failure: { message: string; code?: string }; logs: string[] };

export interface TestOptions {
  /** `ctx.secret(name)` values, by name. */
  secrets?: Record<string, string>;
  /** Added to `ctx.env` (which has `isDev: true`, `version` and `gitSha` "test"). */
  env?: Record<string, string | boolean>;
  /** `ctx.request`. */
  request?: RequestMeta;
}

/**
 * Runs `node` with `inputs` (defaults filled in). Resolves to the outputs or the node's
 * failure, with its logs; rejects on an exception or outputs other than the declared.
 */
export declare function runNode<I extends PinMap, O extends PinMap>(
  node: CodeFunctionNode<I, O>,
  inputs?: Partial<InputValues<I>>,
  options?: TestOptions,
): Promise<TestRun<O>>;
