import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS } from '../../support/system-program.js';
import { tempDir } from '../../support/temp-dir.js';

/** What a page of {@link ChromiumPages} reported as errors (and, when asked, warnings) on its console. */
export interface OpenedPage {
  readonly page: Page;
  readonly problems: string[];
}

/**
 * Headless Debian Chromium (CHROMIUM.path; `.ci/run` installs it, never downloaded), one fresh
 * profile per page: `open` launches it (the profile is a {@link tempDir}, removed after the test),
 * `close` (in `afterEach`) closes the browser, and may be called when nothing was opened.
 */
export class ChromiumPages {
  private context: BrowserContext | undefined;

  constructor(
    private readonly options: { readonly args?: readonly string[]; readonly viewport?: { width: number; height: number }; readonly warnings?: boolean } = {},
  ) {}

  async open(): Promise<OpenedPage> {
    const profile = await tempDir('agentrx-chromium-');
    // launchPersistentContext passes the fresh profile as --user-data-dir.
    this.context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM.path,
      // Its crash-report settings (XDG_CONFIG_HOME) and dconf cache (XDG_CACHE_HOME) in the profile too, not in ~.
      env: { ...process.env, XDG_CONFIG_HOME: join(profile, '.config'), XDG_CACHE_HOME: join(profile, '.cache') },
      headless: true,
      args: [...CHROMIUM_FLAGS, ...(this.options.args ?? [])],
      ...(this.options.viewport ? { viewport: this.options.viewport } : {}),
    });
    const page = this.context.pages()[0] ?? (await this.context.newPage());
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' || (this.options.warnings === true && m.type() === 'warning')) problems.push(`console ${m.type()}: ${m.text()}`);
    });
    return { page, problems };
  }

  async close(): Promise<void> {
    const { context } = this;
    this.context = undefined;
    await context?.close();
  }
}
