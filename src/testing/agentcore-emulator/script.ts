import type { HarnessWireMessage } from './history.js';

/**
 * Script model of the AgentCore emulator: the model answers completed invokes play, and the
 * faults injected into invokes. Wire shapes follow `@aws-sdk/client-bedrock-agentcore`.
 */

/** One tool use of a scripted turn. */
export interface AgentCoreScriptedToolUse {
  /** Default `tooluse_e<invoke>_<i>`. */
  readonly id?: string;
  /** Tool name (an inline function of the harness). */
  readonly name: string;
  /** An object is JSON-encoded; a string is sent verbatim (it may be invalid JSON). */
  readonly input: Readonly<Record<string, unknown>> | string;
  /** How many `contentBlockDelta` frames carry the input. Default 3. */
  readonly pieces?: number;
  /** `toolUse.type` on the wire. Default `tool_use` (a client-side inline function). */
  readonly type?: 'tool_use' | 'server_tool_use' | 'mcp_tool_use';
}

/** One scripted model answer, consumed by one completed invoke. */
export interface AgentCoreScriptedTurn {
  /** Assistant text: a string is streamed in small deltas; an array gives the deltas exactly. */
  readonly text?: string | readonly string[];
  /** Tool uses, streamed after the text (parallel when more than one). */
  readonly toolUses?: readonly AgentCoreScriptedToolUse[];
  /** Default `tool_use` when there are tool uses, else `end_turn`. */
  readonly stopReason?: string;
  /** Default: a deterministic estimate (characters / 4). */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number };
  /** Interleave the input deltas of parallel tool uses (all starts, then deltas round-robin, then stops). */
  readonly interleave?: boolean;
  /** Put every tool-use block at the same `contentBlockIndex` (indices reused, as seen live). */
  readonly reuseIndex?: boolean;
}

/** What a scripted turn function sees. */
export interface AgentCoreTurnContext {
  /** 0-based number of the invoke. */
  readonly invoke: number;
  /** The session header value. */
  readonly runtimeSessionId: string;
  /** The messages this invoke sent (the delta). */
  readonly messages: readonly HarnessWireMessage[];
  /** Committed history of the session before this invoke. */
  readonly history: readonly HarnessWireMessage[];
}

/** A fault injected into one invoke (by 0-based invoke index). */
export type AgentCoreFault =
  /** An HTTP error before any frame (`x-amzn-errortype`, `{message}`). */
  | { readonly kind: 'status'; readonly status: number; readonly errorType?: string; readonly message?: string }
  /** HTTP 429 ThrottlingException. */
  | { readonly kind: 'throttle'; readonly message?: string }
  /** `afterFrames` frames, then an exception frame, then the end of the response. */
  | { readonly kind: 'exception'; readonly afterFrames: number; readonly exceptionType?: string; readonly message?: string }
  /**
   * `afterFrames` frames, then the response ends without `messageStop` (a clean end) — or, with
   * `midFrame`, half of the next frame and a destroyed socket.
   */
  | { readonly kind: 'truncate'; readonly afterFrames: number; readonly midFrame?: boolean }
  /**
   * `afterFrames` frames (plus half of the next one with `midFrame`), then nothing while the
   * socket stays open, until `release(n)` (the stream goes on) or `close()`. An invoke may stall
   * several times (one fault per stall), before an `exception` or `truncate` fault if any.
   */
  | { readonly kind: 'stall'; readonly afterFrames: number; readonly midFrame?: boolean }
  /**
   * `afterFrames` frames, then one damaged frame, then the end of the response (the invoke is not
   * committed): `checksum` sends the next scripted frame with a wrong message CRC; `headers` a
   * frame with right checksums whose header block is malformed (a string header longer than the
   * block); `payload` an
   * `event` frame (`:event-type` `contentBlockDelta`) whose payload is `body` (default: not
   * JSON); `exception_body` an `exception` frame of `exceptionType` (default
   * `internalServerException`) whose body is `body` (default: plain text, not JSON).
   */
  | {
      readonly kind: 'corrupt';
      readonly afterFrames: number;
      readonly damage: 'checksum' | 'headers' | 'payload' | 'exception_body';
      readonly exceptionType?: string;
      readonly body?: string;
    };

/** Faults by 0-based invoke index. */
export type AgentCoreFaultPlan = Readonly<Record<number, AgentCoreFault | readonly AgentCoreFault[]>>;

/** The faults planned for invoke `n`, as a list. */
export function faultsFor(plan: AgentCoreFaultPlan | undefined, n: number): AgentCoreFault[] {
  const f = plan?.[n];
  if (f === undefined) return [];
  return Array.isArray(f) ? [...(f as readonly AgentCoreFault[])] : [f as AgentCoreFault];
}
