/** One runner of the cost-per-session benchmark: `setup` once per process, then one call per session. */
export interface SessionOutcome {
  readonly text: string;
  readonly toolCalls: number;
}
export type RunSession = () => Promise<SessionOutcome>;
export type Setup = (baseUrl: string) => Promise<RunSession>;

/** The two tools every runner implements the same way. */
export const echo = (text: string): string => text.toUpperCase();
export const add = (a: number, b: number): { sum: number } => ({ sum: a + b });
