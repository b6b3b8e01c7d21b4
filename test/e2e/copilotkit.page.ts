import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locator, Page, Request } from 'playwright-core';
import { withDeadline } from '../support/deadline.js';

/** Where the steps' screenshots go (committed: they show what the example looks like). */
export const SCREENSHOT_DIR = join(dirname(fileURLToPath(import.meta.url)), 'screenshots');

/** How long one wait on the page may take before the step fails with its diagnostics. */
const WAIT_MS = 20_000;

/** Any http(s) URL whose host is not 127.0.0.1. */
const NOT_LOOPBACK = /^https?:\/\/(?!127\.0\.0\.1[:/])/;

/** Screenshots taken at most while waiting for two equal ones in a row. */
const SETTLE_TRIES = 20;

/** Longest text of one recorded exchange in a failure's diagnostics. */
const EXCERPT = 3_000;

/**
 * The example app's page in Chromium, as a test drives it: open it, type into the chat, wait for
 * what it shows (a wait that times out fails with what the page logged, the HTTP exchanges it
 * made with the agent or the runtime, and what the server side recorded), and screenshot it.
 */
export class ChatPage {
  /** What the page tried to fetch from anywhere but loopback (refused: this machine reaches no network). */
  readonly outside: string[] = [];
  /** The page's calls to its agent (`agentrx serve` or the runtime), in the order they were made. */
  private readonly exchanges: Exchange[] = [];

  /**
   * Drives `page` (opened by `ChromiumPages`, which collects its console errors in `problems`);
   * `serverSide` tells what the server side recorded, for failure messages.
   */
  static async attach(page: Page, problems: string[], serverSide: () => string): Promise<ChatPage> {
    const chat = new ChatPage(page, problems, serverSide);
    await page.route(NOT_LOOPBACK, (route) => {
      chat.outside.push(route.request().url());
      return route.abort('blockedbyclient');
    });
    return chat;
  }

  private constructor(
    readonly page: Page,
    /** Console errors and page errors, as `ChromiumPages` collects them. */
    readonly problems: string[],
    private readonly serverSide: () => string,
  ) {
    page.setDefaultTimeout(WAIT_MS);
    page.on('request', (r) => {
      if (r.resourceType() === 'fetch' || r.resourceType() === 'xhr') this.exchanges.push({ request: r, outcome: 'no answer yet' });
    });
    page.on('response', (r) => this.update(r.request(), `${r.status()}, body still coming`));
    page.on('requestfinished', (r) => void this.finished(r));
    page.on('requestfailed', (r) => this.update(r, `failed: ${r.failure()?.errorText ?? '?'}`));
  }

  /** Opens `url` and waits for the chat's input (diagnostics then show this page's exchanges only). */
  async open(url: string): Promise<void> {
    this.exchanges.length = 0;
    await this.page.goto(url);
    await this.until(this.input, 'the chat input');
  }

  /** Reloads the page (its URL keeps the thread) and waits for the chat's input. */
  async reload(): Promise<void> {
    await this.page.reload();
    await this.until(this.input, 'the chat input after the reload');
  }

  get input(): Locator {
    return this.page.getByTestId('copilot-chat-textarea');
  }

  /** Sends `text` as the user's message. */
  async send(text: string): Promise<void> {
    await this.input.fill(text);
    await this.page.getByTestId('copilot-send-button').click();
  }

  /** The tool call card of tool `name` (rendered by the app for every tool call). */
  tool(name: string): Locator {
    return this.page.locator(`[data-testid="tool-call"][data-tool="${name}"]`);
  }

  /** The user's messages in the chat. */
  get userMessages(): Locator {
    return this.page.getByTestId('copilot-user-message');
  }

  /** The assistant's messages in the chat. */
  get assistantMessages(): Locator {
    return this.page.getByTestId('copilot-assistant-message');
  }

  /** Waits until `locator` is visible; on timeout fails with `what` and the diagnostics. */
  async until(locator: Locator, what: string): Promise<void> {
    try {
      await locator.waitFor({ state: 'visible' });
    } catch (e) {
      throw new Error(`timed out waiting for ${what}: ${(e as Error).message.split('\n')[0]}\n${this.diagnostics()}`);
    }
  }

  /** Waits for `p` (something on the server side); after the page's wait time fails with `what` and the diagnostics. */
  async reached<T>(p: Promise<T>, what: string): Promise<T> {
    try {
      return await withDeadline(p, WAIT_MS, what);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${this.diagnostics()}`);
    }
  }

  /** Waits until the run status says `idle` again (after a run). */
  async idle(): Promise<void> {
    await this.until(this.page.getByTestId('run-status').filter({ hasText: /^idle$/ }), 'the run to end (run status "idle")');
  }

  /** The page's console errors, its exchanges with the agent and the server side's record, for a failure message. */
  diagnostics(): string {
    const clip = (s: string): string => (s.length > EXCERPT ? `${s.slice(0, EXCERPT)}… (${s.length} chars)` : s);
    return [
      `console errors: ${this.problems.length === 0 ? 'none' : `\n  ${this.problems.join('\n  ')}`}`,
      `the page's exchanges with its agent since it was opened (latest last):\n  ${
        this.exchanges
          .slice(-4)
          .map((e) => clip(`${e.request.method()} ${e.request.url()} → ${e.outcome}\n    sent: ${e.request.postData() ?? ''}`))
          .join('\n  ') || 'none'
      }`,
      `server side:\n${clip(this.serverSide())}`,
    ].join('\n');
  }

  /**
   * Saves a screenshot as `<name>.png` in {@link SCREENSHOT_DIR}, once the page has settled: two
   * screenshots in a row are the same (the chat scrolls to its end with an animation).
   */
  async screenshot(name: string): Promise<void> {
    let previous: Buffer | undefined;
    for (let i = 0; i < SETTLE_TRIES; i++) {
      const shot = await this.page.screenshot({ animations: 'disabled', caret: 'hide' });
      if (previous?.equals(shot)) break;
      previous = shot;
    }
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    await writeFile(join(SCREENSHOT_DIR, `${name}.png`), previous!);
  }

  private update(request: Request, outcome: string): void {
    const exchange = this.exchanges.find((e) => e.request === request);
    if (exchange) exchange.outcome = outcome;
  }

  private async finished(request: Request): Promise<void> {
    const response = await request.response();
    const body = await response?.text().catch((e: unknown) => `<no body: ${(e as Error).message}>`);
    this.update(request, `${response?.status() ?? '?'}, got: ${body ?? ''}`);
  }
}

/** One call of the page to its agent, and how it went (status and body, once known). */
interface Exchange {
  readonly request: Request;
  outcome: string;
}
