import { defineTool } from '../../../src/core/tools/define-tool.js';
import { CHROMIUM, describeWith } from '../../support/system-program.js';
import { ChromiumPages, type OpenedPage } from './agui-http.browser.js';
import { startStack, type Stack } from './agui-http.fixtures.js';

// Debian's Chromium (CHROMIUM.path); `.ci/run` installs it. Never downloaded by the test.

/**
 * Each test launches Chromium, starts a demo stack and runs a chat with two model requests: on a
 * busy machine (the suite with two CPU hogs) that took longer than jest's default 15 s. The same
 * bound as the other browser spec's tests.
 */
const BROWSER_TEST_MS = 60_000;

describeWith(CHROMIUM, 'the AG-UI chat page with the user in the loop (headless Chromium)', () => {
  let stack: Stack | undefined;
  const browser = new ChromiumPages();
  afterEach(async () => {
    await browser.close();
    await stack?.close();
    stack = undefined;
  });

  async function openPage(): Promise<OpenedPage> {
    const opened = await browser.open();
    await opened.page.goto(stack!.server.url);
    return opened;
  }

  describe("when the demo model asks the user with the page's frontend tool (ask_user)", () => {
    it(
      "should ask in the tool's card, send the answer back, and show the model's reply to it",
      async () => {
        stack = await startStack({ demo: true });
        const { page, problems } = await openPage();
        await page.locator('#prompt').fill('please ask me before deploying');
        await page.locator('#send').click();

        const card = page.locator('.tool', { hasText: 'ask_user' });
        await card.locator('.ask button.yes').waitFor({ state: 'visible' });
        expect(await card.locator('.state').textContent()).toBe('waiting for you');
        expect(await card.locator('.question').textContent()).toContain('please ask me before deploying');
        await card.locator('.ask button.yes').click();

        await page.locator('.msg.assistant', { hasText: 'ask_user' }).waitFor();
        await page.locator('#status', { hasText: 'run finished' }).waitFor();
        expect(await card.locator('pre.result').textContent()).toBe('yes');
        expect(await card.getAttribute('class')).toContain('done');
        // The model's second request answers its call with the user's answer.
        const last = stack.emulator.requests.filter((r) => r.completion !== undefined).at(-1)!.body as { messages: { role: string; content?: string }[] };
        expect(last.messages.at(-1)).toMatchObject({ role: 'tool', content: 'yes' });
        expect(await page.locator('.error').count()).toBe(0);
        expect(problems).toEqual([]);
      },
      BROWSER_TEST_MS,
    );
  });

  describe("when a tool needs the user's approval (an interrupt)", () => {
    it(
      'should show Allow / Deny, and run the tool once allowed',
      async () => {
        let ran = 0;
        const deploy = defineTool({
          name: 'calculate',
          description: 'Evaluates arithmetic (needs approval here).',
          requireApproval: true,
          inputSchema: { type: 'object', properties: { expression: { type: 'string' } } },
          handle: () => String(++ran * 126),
        });
        stack = await startStack({ demo: true, tools: [deploy] });
        const { page, problems } = await openPage();
        await page.locator('#prompt').fill('what is (17 + 25) * 3');
        await page.locator('#send').click();

        const box = page.locator('.confirm');
        await box.locator('button.yes').waitFor({ state: 'visible' });
        expect(await box.textContent()).toContain('calculate');
        expect(ran).toBe(0);
        await box.locator('button.yes').click();

        await page.locator('.tool.done').waitFor();
        await page.locator('#status', { hasText: 'run finished' }).waitFor();
        expect(ran).toBe(1);
        expect(await page.locator('.tool.done pre.result').textContent()).toBe('126');
        expect(await page.locator('.error').count()).toBe(0);
        expect(problems).toEqual([]);
      },
      BROWSER_TEST_MS,
    );
  });
});
