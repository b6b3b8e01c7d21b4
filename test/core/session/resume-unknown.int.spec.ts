/**
 * Resuming a Local session id that the store does not have (a typo) is an error naming the id,
 * with every store engine: the memory and file stores, and Redis.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentRx } from '../../../src/agentrx.js';
import { FileSessionStore } from '../../../src/core/store/file/file-session-store.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import { SessionStore } from '../../../src/core/store/session-store.js';
import { ContainerModule } from '../../../src/core/util/inversify.js';
import { RedisSessionStore } from '../../../src/distributed/redis-store/redis-session-store.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';
import { rejectedWith } from '../../support/agentrx-errors.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server.js';

async function expectRefused(store: SessionStore & { close?(): Promise<void> }, emu: OpenAiEmulator): Promise<void> {
  const rx = await AgentRx.create({
    modules: [new ContainerModule((o) => void o.bind(SessionStore).toConstantValue(store))],
    config: { provider: 'local', logLevel: 'silent', consumers: { terminal: false }, providers: { local: { baseUrl: emu.baseUrl, model: 'scripted' } } },
  });
  try {
    const e = await rejectedWith('invalid_options', rx.run({ sessionId: 'local-typo', prompt: 'hello again' }));
    expect(e.message).toMatch(/^cannot resume session 'local-typo': the session store has no session of that id/);
    expect(e.details).toEqual({ sessionId: 'local-typo' });
    expect(emu.requests.filter((r) => r.completion !== undefined)).toHaveLength(0);
    // Nothing was stored under the mistyped id.
    expect(await store.load('local-typo')).toBeUndefined();
  } finally {
    await rx.stop();
  }
}

describe('resuming a session id the store does not have', () => {
  let emu: OpenAiEmulator;
  beforeEach(async () => {
    emu = await startOpenAiEmulator({ script: [{ text: 'never' }] });
  });
  afterEach(async () => {
    await emu.close();
  });

  it('should be invalid_options naming the id, with the memory store', async () => {
    await expectRefused(new MemorySessionStore(), emu);
  });

  it("should say that the store keeps no closed session when a closed one is resumed with the memory store's memoryKeep 'none'", async () => {
    const store = new MemorySessionStore(0, 0, { keep: 'none' });
    const rx = await AgentRx.create({
      modules: [new ContainerModule((o) => void o.bind(SessionStore).toConstantValue(store))],
      config: { provider: 'local', logLevel: 'silent', consumers: { terminal: false }, providers: { local: { baseUrl: emu.baseUrl, model: 'scripted' } } },
    });
    try {
      const first = await rx.run({ prompt: 'hello' });
      expect(first.text).toBe('never');
      const e = await rejectedWith('invalid_options', rx.run({ sessionId: first.sessionId, prompt: 'hello again' }));
      expect(e.message).toContain(`cannot resume session '${first.sessionId}'`);
      expect(e.message).toContain("store.memoryKeep: 'none'");
    } finally {
      await rx.stop();
    }
  });

  it('should be invalid_options naming the id, with the file store', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentrx-resume-'));
    try {
      await expectRefused(new FileSessionStore(dir), emu);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describeWithRedis('with the Redis store', () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterAll(async () => {
      await redis?.stop();
    });

    it('should be invalid_options naming the id', async () => {
      const store = new RedisSessionStore({ url: redis.url, keyPrefix: 'resume-unknown:' });
      try {
        await expectRefused(store, emu);
      } finally {
        await store.close();
      }
    });
  });
});
