import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS } from '../../support/system-program.js';

/** What a page of {@link ChromiumPages} reported as errors (and, when asked, warnings) on its console. */
export interface OpenedPage {
  readonly page: Page;
  readonly problems: string[];
}

/**
 * Headless Debian Chromium (CHROMIUM.path; `.ci/run` installs it, never downloaded), one fresh
 * profile per page: `open` launches it, `close` (in `afterEach`) closes the browser and removes
 * the profile, and may be called when nothing was opened.
 */
export class ChromiumPages {
  private context: BrowserContext | undefined;
  private profile: string | undefined;

  constructor(private readonly options: { readonly args?: readonly string[]; readonly viewport?: { width: number; height: number }; readonly warnings?: boolean } = {}) {}

  async open(): Promise<OpenedPage> {
    this.profile = await mkdtemp(join(tmpdir(), 'agentrx-chromium-'));
    // launchPersistentContext passes the fresh profile as --user-data-dir.
    this.context = await chromium.launchPersistentContext(this.profile, {
      executablePath: CHROMIUM.path,
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
    const { context, profile } = this;
    this.context = undefined;
    this.profile = undefined;
    await context?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
  }
}
