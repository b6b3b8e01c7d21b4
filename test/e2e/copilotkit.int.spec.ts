import { ChromiumPages } from '../servers/agui-http/agui-http.browser.js';
import { CHROMIUM, describeWith } from '../support/system-program.js';
import { tempDir } from '../support/temp-dir.js';
import { bundleExample } from './copilotkit.bundle.js';
import { ChatPage } from './copilotkit.page.js';
import { copilotRuntimeFor, RUNTIME_PATH, startAgentRxServe, startAppServer, type AgentRxServe, type AppServer } from './copilotkit.servers.js';
import { FIXED_NOW } from './fixed-clock.module.js';
import type { GatedRequest } from './model-gate.js';

// Debian's Chromium (CHROMIUM.path; `.ci/run` installs it), never downloaded by the test. These
// flags keep the software rasterizer's output the same from run to run (committed screenshots).
const EXTRA_ARGS = ['--run-all-compositor-stages-before-draw', '--disable-lcd-text', '--disable-partial-raster'];
const VIEWPORT = { width: 800, height: 600 };
/** One step: a few runs of the demo model, each in milliseconds, plus the page's waits. */
const STEP_MS = 60_000;

/** What the frontend tool's handler in the page answers (examples/copilotkit/app.tsx ASK_USER_ANSWER). */
const ASK_USER_ANSWER = 'yes, go ahead';

/** How the page reaches `agentrx serve`. */
type Way = 'runtime' | 'direct';

/** The demo model's request ends with a tool result: the call that writes the run's final answer. */
const answersToolResults = (body: GatedRequest): boolean => body.messages.at(-1)?.role === 'tool';

/** How many calls of the demo model had `text` in their request (in a prompt, a tool result, the history). */
function modelCallsAbout(serve: AgentRxServe, text: string): number {
  return serve.model.requests.filter((r) => JSON.stringify(r.body ?? '').includes(text)).length;
}

/**
 * The steps, in one browser page per way (a new thread per step, except the follow-up, which
 * continues the first step's thread). Each step ends with a screenshot `<way>-<step>.png`.
 */
function steps(way: Way, appDir: () => string): void {
  let app: AppServer | undefined;
  let serve: AgentRxServe | undefined;
  let chat: ChatPage;
  const browser = new ChromiumPages({ args: EXTRA_ARGS, viewport: VIEWPORT });

  beforeAll(async () => {
    app = await startAppServer(appDir());
    serve = await startAgentRxServe({ cors: way === 'direct' ? [app.origin] : [] });
    if (way === 'runtime') app.mount(await copilotRuntimeFor(serve.endpoint));
    const { page, problems } = await browser.open();
    chat = await ChatPage.attach(page, problems, () => serve?.log().split('\n').slice(-12).join('\n') ?? '');
  }, STEP_MS);

  afterAll(async () => {
    await browser.close();
    await app?.close();
    await serve?.close();
  });

  /** The page's URL for thread `threadId`, talking to the agent the way this block does. */
  const urlFor = (threadId: string): string => {
    const to = way === 'runtime' ? `runtime=${encodeURIComponent(RUNTIME_PATH)}` : `agent=${encodeURIComponent(serve!.endpoint)}`;
    return `${app!.origin}/?${to}&thread=${encodeURIComponent(`copilotkit-${way}-${threadId}`)}`;
  };
  /**
   * Runs one step, then saves its screenshot `<way>-<name>.png` (also when the step failed: the
   * picture shows where; a screenshot that fails then does not hide the step's own failure), and
   * checks that the step left no run error on the page, logged no console error and fetched
   * nothing off loopback.
   */
  const step = async (name: string, body: () => Promise<void>): Promise<void> => {
    const mark = chat.problems.length;
    let failed = true;
    try {
      await body();
      failed = false;
    } finally {
      await chat.screenshot(`${way}-${name}`).catch((e: unknown) => {
        if (!failed) throw e;
      });
    }
    expect(await chat.page.getByTestId('run-error').allTextContents()).toEqual([]);
    expect(chat.problems.slice(mark)).toEqual([]);
    expect(chat.outside).toEqual([]);
  };

  it(
    'should call a tool for the time, show the call with its result, and the answer',
    () =>
      step('1-tool-call', async () => {
        await chat.open(urlFor('time'));
        await chat.send('what time is it?');
        const tool = chat.tool('get_time');
        await chat.until(tool.and(chat.page.locator('[data-status="complete"]')), 'the get_time tool call, complete');
        await chat.until(chat.assistantMessages.filter({ hasText: 'get_time returned' }), "the answer quoting get_time's result");
        await chat.idle();

        expect(await chat.userMessages.allTextContents()).toEqual([expect.stringContaining('what time is it?')]);
        expect(await tool.count()).toBe(1);
        // get_time read the server's (fixed) clock; the answer quotes what it returned.
        const result = JSON.parse((await tool.getByTestId('tool-result').textContent()) ?? '') as { iso?: string };
        expect(new Date(result.iso ?? '').getTime()).toBe(FIXED_NOW.getTime());
        expect(await chat.assistantMessages.filter({ hasText: `get_time returned: "{"iso":"${result.iso}"` }).count()).toBe(1);
      }),
    STEP_MS,
  );

  it(
    'should continue the same thread with a follow-up that the model answers with the earlier turns in view',
    () =>
      step('2-follow-up', async () => {
        const threadId = await chat.page.getByTestId('thread-id').textContent();
        await chat.send('and what is (17 + 25) * 3?');
        const tool = chat.tool('calculate');
        await chat.until(tool.and(chat.page.locator('[data-status="complete"]')), 'the calculate tool call, complete');
        await chat.until(chat.assistantMessages.filter({ hasText: 'calculate returned: "(17 + 25) * 3 = 126"' }), "the answer quoting calculate's result");
        await chat.idle();

        expect(await chat.userMessages.allTextContents()).toEqual([
          expect.stringContaining('what time is it?'),
          expect.stringContaining('and what is (17 + 25) * 3?'),
        ]);
        expect((await tool.getByTestId('tool-result').textContent())?.trim()).toBe('(17 + 25) * 3 = 126');
        // The first turn is still on the page, in the same thread.
        expect(await chat.tool('get_time').count()).toBe(1);
        expect(await chat.assistantMessages.filter({ hasText: 'get_time returned' }).count()).toBe(1);
        expect(await chat.page.getByTestId('thread-id').textContent()).toBe(threadId);
        // And on the server: the model was asked the follow-up with the first turn in its history.
        const last = serve!.model.requests.filter((r) => JSON.stringify(r.body ?? '').includes('(17 + 25) * 3')).at(-1);
        expect(JSON.stringify(last?.body)).toContain('what time is it?');
      }),
    STEP_MS,
  );

  it(
    "should share the state both ways: the page's change reaches the agent, a tool's STATE_DELTA reaches the page",
    () =>
      step('3-shared-state', async () => {
        await chat.open(urlFor('state'));
        await chat.page.getByTestId('todo-input').fill('water the plants');
        await chat.page.getByTestId('todo-add').click();
        await chat.until(chat.page.getByTestId('todo').filter({ hasText: 'water the plants' }), 'the todo added from the page');

        await chat.send('add a todo: buy milk');
        const tool = chat.tool('add_todo');
        await chat.until(tool.and(chat.page.locator('[data-status="complete"]')), 'the add_todo tool call, complete');
        await chat.until(chat.page.locator('[data-testid="state-event"][data-type="STATE_DELTA"]'), 'a STATE_DELTA in the page');
        await chat.until(chat.page.getByTestId('todo').filter({ hasText: 'buy milk' }), "the tool's todo in the shared state");
        await chat.idle();

        // The tool saw the page's todo (the state went with the run), and added its own after it.
        expect((await tool.getByTestId('tool-result').textContent())?.trim()).toBe('added todo "buy milk"; the shared state now lists 2 todos');
        expect(await chat.page.getByTestId('todo').allTextContents()).toEqual(['water the plants', 'buy milk']);
        const delta = await chat.page.locator('[data-testid="state-event"][data-type="STATE_DELTA"]').last().textContent();
        expect(delta).toContain('buy milk');
      }),
    STEP_MS,
  );

  it(
    "should run a frontend tool's handler in the page and continue the run with its result",
    () =>
      step('4-frontend-tool', async () => {
        await chat.open(urlFor('frontend-tool'));
        await chat.send('check with me before you go on');
        await chat.until(chat.page.getByTestId('asked-question'), "the frontend tool's handler to run in the page");
        await chat.until(chat.assistantMessages.filter({ hasText: `ask_user returned: "${ASK_USER_ANSWER}"` }), "the answer quoting the handler's result");
        await chat.idle();

        expect(await chat.page.getByTestId('asked-question').allTextContents()).toEqual([
          `Shall I go ahead with "check with me before you go on"? → ${ASK_USER_ANSWER}`,
        ]);
        // The model got the handler's result as the tool's result, once.
        expect(modelCallsAbout(serve!, ASK_USER_ANSWER)).toBe(1);
      }),
    STEP_MS,
  );

  it(
    'should ask in the page to allow a tool that needs approval, and run it once allowed',
    () =>
      step('5-approval-allowed', async () => {
        await chat.open(urlFor('approval'));
        await chat.send('send an email to bob@example.com about the launch');
        const card = chat.page.getByTestId('confirm-card');
        await chat.until(card, 'the confirmation asked in the page');
        const question = await card.getByTestId('confirm-message').textContent();
        expect(question).toContain('send_email');
        expect(question).toContain('bob@example.com');
        // Nothing ran yet: the run waits for the answer.
        expect(modelCallsAbout(serve!, 'pretended to send')).toBe(0);
        await chat.screenshot(`${way}-5-approval-asked`);

        await card.getByTestId('confirm-allow').click();
        await chat.until(
          chat.assistantMessages.filter({ hasText: 'send_email returned: "pretended to send an e-mail to bob@example.com' }),
          'the answer after the tool ran',
        );
        await chat.idle();

        expect(await card.count()).toBe(0);
        expect(modelCallsAbout(serve!, 'pretended to send an e-mail to bob@example.com with the subject \\"the launch\\"')).toBe(1);
      }),
    STEP_MS,
  );

  it(
    'should reattach after a reload in the middle of a run and show the rest of that run',
    async () => {
      // The model call that writes the run's answer waits until the page has reloaded.
      const hold = serve!.gate.hold(answersToolResults);
      try {
        await step('6-after-reload', async () => {
          await chat.open(urlFor('reload'));
          await chat.send('what is 6 * 7?');
          await chat.reached(hold.reached, 'the model call that writes the answer (held)');
          await chat.until(chat.tool('calculate').and(chat.page.locator('[data-status="complete"]')), 'the calculate tool call before the reload');
          const url = chat.page.url();

          await chat.reload();
          expect(chat.page.url()).toBe(url);
          // The run is still under way on the server; the reloaded page follows it.
          await chat.until(chat.userMessages.filter({ hasText: 'what is 6 * 7?' }), 'the prompt of the run, replayed after the reload');
          await chat.until(chat.tool('calculate').and(chat.page.locator('[data-status="complete"]')), 'the calculate tool call, replayed after the reload');
          await chat.until(chat.page.getByTestId('run-status').filter({ hasText: /^running$/ }), 'the reattached run, still running');
          await chat.screenshot(`${way}-6-reattached`);

          hold.release();
          await chat.until(chat.assistantMessages.filter({ hasText: 'calculate returned: "6 * 7 = 42"' }), 'the end of the run after the reload');
          await chat.idle();

          expect(await chat.userMessages.count()).toBe(1);
          expect(await chat.tool('calculate').count()).toBe(1);
          // One run: the reload neither restarted it nor ran the tool again (a tool call, then its answer).
          expect(modelCallsAbout(serve!, 'what is 6 * 7?')).toBe(2);
        });
      } finally {
        hold.release();
      }
    },
    STEP_MS,
  );
}

describeWith(CHROMIUM, 'the CopilotKit example app (examples/copilotkit) on agentrx serve, in headless Chromium', () => {
  let appDir = '';
  // Bundled once for both ways (esbuild, into a temp folder).
  beforeAll(async () => {
    appDir = await tempDir('agentrx-copilotkit-app-', { scope: 'file' });
    await bundleExample(appDir);
  }, 120_000);

  describe('when the page talks to agentrx serve through the CopilotKit runtime', () => {
    steps('runtime', () => appDir);
  });

  describe('when the page talks to agentrx serve directly', () => {
    steps('direct', () => appDir);
  });
});
