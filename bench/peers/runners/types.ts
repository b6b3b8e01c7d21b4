/** One runner of the cost-per-session benchmark: `setup` once per process, then one call per session. */
export interface SessionOutcome {
  /** The final answer's text, concatenated from the text deltas the runner delivered. */
  readonly text: string;
  /** Every tool result the runner delivered: the call id and the output as the framework gave it. */
  readonly toolResults: readonly { readonly id: string; readonly output: unknown }[];
}
export type RunSession = () => Promise<SessionOutcome>;
export type Setup = (baseUrl: string) => Promise<RunSession>;

/** The two tools every runner implements the same way. */
export const echo = (text: string): string => text.toUpperCase();
export const add = (a: number, b: number): { sum: number } => ({ sum: a + b });
