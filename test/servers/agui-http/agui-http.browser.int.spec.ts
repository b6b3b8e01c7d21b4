import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoToolsModule } from '../../../src/plugins/tools/tools.module.js';
import { CHROMIUM, describeWith } from '../../support/system-program.js';
import { ChromiumPages } from './agui-http.browser.js';
import { startStack, type Stack } from './agui-http.fixtures.js';

/** The little of the browser's window these tests reach from `page.evaluate` (the project compiles without the DOM lib). */
interface Page {
  assistantUpdates: number;
  readonly document: {
    getElementById(id: string): { readonly textContent: string | null } | null;
    querySelector(selector: string): unknown;
    querySelectorAll(selector: string): { readonly length: number };
  };
  readonly MutationObserver: new (
    callback: (records: readonly { readonly target?: { readonly classList?: { contains(name: string): boolean } } }[]) => void,
  ) => { observe(target: unknown, options: Record<string, boolean>): void };
  requestAnimationFrame(callback: () => void): void;
  getComputedStyle(node: unknown): { readonly backgroundColor: string };
}

// Debian's Chromium (CHROMIUM.path); `.ci/run` installs it. Never downloaded by the test.
const EXTRA_ARGS = [
  // Without these the software rasterizer anti-aliases a few edge pixels differently on each
  // run, and the committed screenshot would change every time the test runs.
  '--run-all-compositor-stages-before-draw',
  '--disable-lcd-text',
  '--disable-partial-raster',
];
const SCREENSHOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'agui-page.png');
const PROMPT = 'what is (17 + 25) * 3';
const FOLLOW_UP = 'and what is 2 + 2?';
// The demo model calls `calculate` with "7 / 0"; the tool throws, so its result is an error.
const FAILING_PROMPT = 'what is 7 / 0';

describeWith(CHROMIUM, 'the AG-UI chat page in headless Chromium', () => {
  let stack: Stack | undefined;
  const browser = new ChromiumPages({ args: EXTRA_ARGS, viewport: { width: 960, height: 800 }, warnings: true });
  afterEach(async () => {
    await browser.close();
    await stack?.close();
    // Each test opens its own: a test that fails early must not close the previous one's again.
    stack = undefined;
  });

  describe('when a prompt that needs a tool is sent from the page', () => {
    it('should stream the answer, show the tool call with its arguments and result, continue the thread, and save a screenshot', async () => {
      stack = await startStack({ demo: true, modules: [demoToolsModule] });
      const { page, problems } = await browser.open();

      await page.goto(stack.server.url);
      // Count DOM updates of assistant bubbles: streamed text arrives in several of them.
      // (Browser code reaches the DOM through `page`: this project compiles without the DOM lib.)
      await page.evaluate(() => {
        const w = globalThis as unknown as Page;
        w.assistantUpdates = 0;
        new w.MutationObserver((records) => {
          for (const r of records) if (r.target?.classList?.contains('assistant')) w.assistantUpdates++;
        }).observe(w.document.getElementById('log'), { subtree: true, childList: true, characterData: true });
      });
      await page.locator('#prompt').fill(PROMPT);
      await page.locator('#send').click();

      const tool = page.locator('.tool.done');
      await tool.waitFor({ state: 'visible' });
      await page.locator('#status', { hasText: 'run finished' }).waitFor();

      expect(await page.locator('.msg.user').allTextContents()).toEqual([PROMPT]);
      expect(await tool.locator('.name').textContent()).toBe('calculate');
      expect(await tool.locator('.args').textContent()).toContain('"expression": "(17 + 25) * 3"');
      expect(await tool.locator('.result').textContent()).toBe('(17 + 25) * 3 = 126');
      const answer = (await page.locator('.msg.assistant').allTextContents()).join('\n');
      expect(answer).toContain('calculate returned: "(17 + 25) * 3 = 126"');
      expect(await page.locator('.msg.assistant.streaming').count()).toBe(0);
      expect(await page.evaluate(() => (globalThis as unknown as Page).assistantUpdates)).toBeGreaterThan(3);
      expect(await page.locator('.error').count()).toBe(0);
      expect(problems).toEqual([]);

      // A follow-up on the same page continues the same thread (one session, a second run).
      await page.locator('#prompt').fill(FOLLOW_UP);
      await page.locator('#send').click();
      // A function, not a string: the page's CSP forbids eval, which a string predicate needs.
      await page.waitForFunction(() => {
        const d = (globalThis as unknown as Page).document;
        return (
          d.querySelectorAll('.tool.done').length === 2 &&
          d.querySelectorAll('.msg.assistant').length === 2 &&
          d.querySelector('.streaming') === null &&
          d.getElementById('status')?.textContent === 'run finished'
        );
      });
      expect(await page.locator('.tool.done .result').allTextContents()).toEqual(['(17 + 25) * 3 = 126', '2 + 2 = 4']);
      expect(stack.sessions).toHaveLength(1);
      expect(stack.sessions[0]!.runs).toBe(2);
      expect(problems).toEqual([]);

      await mkdir(dirname(SCREENSHOT), { recursive: true });
      // Let the last layout settle into painted frames, so the picture is the same on every run.
      await page.evaluate(
        () =>
          new Promise<void>((resolve) =>
            (globalThis as unknown as Page).requestAnimationFrame(() => (globalThis as unknown as Page).requestAnimationFrame(() => resolve())),
          ),
      );
      await page.screenshot({ path: SCREENSHOT, animations: 'disabled', caret: 'hide' });
    }, 60_000);
  });

  describe('when a prompt makes a tool fail', () => {
    it('should show the tool as failed with its error text, and the answer quoting the failure', async () => {
      stack = await startStack({ demo: true, modules: [demoToolsModule] });
      const { page, problems } = await browser.open();

      await page.goto(stack.server.url);
      await page.locator('#prompt').fill(FAILING_PROMPT);
      await page.locator('#send').click();

      const tool = page.locator('.tool.failed');
      await tool.waitFor({ state: 'visible' });
      await page.locator('#status', { hasText: 'run finished' }).waitFor();

      expect(await tool.locator('.name').textContent()).toBe('calculate');
      expect(await tool.locator('.args').textContent()).toContain('"expression": "7 / 0"');
      expect(await tool.locator('.state').textContent()).toBe('\u2717 failed');
      expect(await tool.locator('.label').allTextContents()).toEqual(['arguments', 'error']);
      expect(await tool.locator('.result').textContent()).toContain('division by zero');
      // Failed, not done: no card says "✓ done", and the card has the failed colours.
      expect(await page.locator('.tool.done').count()).toBe(0);
      expect(await page.locator('.tool .state', { hasText: '\u2713 done' }).count()).toBe(0);
      expect(await tool.evaluate((n) => (globalThis as unknown as Page).getComputedStyle(n).backgroundColor)).toBe('rgb(253, 236, 236)');
      // The tool failed, the run did not: it finished with the model's answer about the failure.
      const answer = (await page.locator('.msg.assistant').allTextContents()).join('\n');
      expect(answer).toContain('calculate failed');
      expect(answer).toContain('division by zero');
      expect(await page.locator('.error').count()).toBe(0);
      expect(stack.sessions[0]!.toolResults.size).toBe(1);
      expect(problems).toEqual([]);
    }, 60_000);
  });
});
