/**
 * What `submit` refuses before anything is enqueued (options that cannot travel to a worker, or
 * that `start` would refuse), and that a Redis URL's credentials never reach an error.
 */
import { Redis } from 'ioredis';
import { RedisSessionStore } from '../../src/distributed/redis-store/redis-session-store.js';
import { DistributedKeys } from '../../src/distributed/distributed-keys.js';
import { SessionQueue } from '../../src/distributed/session-queue.js';
import { checkSubmitOptions } from '../../src/distributed/submit-options.js';
import { describeWithRedis, freePort, startRedisServer as startRedis, type RedisServer as RedisProcess } from '../support/redis-server.js';

describe('checkSubmitOptions', () => {
  describe('when given functions and a signal', () => {
    it('should refuse each one, saying why and what to use instead', () => {
      let error: unknown;
      try {
        checkSubmitOptions({ prompt: 'x', confirmTool: () => true, turnGuard: () => false, signal: new AbortController().signal } as never);
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({ code: 'invalid_options' });
      const message = (error as Error).message;
      expect(message).toMatch(
        /confirmTool: not accepted by submit: a function cannot travel to a worker in another process; answer confirmation requests with handle\.sendEvent/,
      );
      expect(message).toMatch(/turnGuard: not accepted by submit: a function cannot travel .*maxTurns and timeoutMs/);
      expect(message).toMatch(/signal: not accepted by submit: an AbortSignal cannot travel .*handle\.cancel\(\)/);
    });
  });

  describe('when given an unknown key, a non-JSON value or a value start refuses', () => {
    it('should list every problem in one invalid_options', () => {
      expect(() => checkSubmitOptions({ prompt: 'x', colour: 'red' } as never)).toThrow(/colour: unknown option; submit accepts prompt, sessionId/);
      expect(() => checkSubmitOptions({ outcome: { description: 'd', rubric: new Date() } } as never)).toThrow(/outcome: must be plain JSON/);
      expect(() => checkSubmitOptions({ maxTurns: 0 })).toThrow(/maxTurns: must be an integer from 1/);
      expect(() => checkSubmitOptions(null)).toThrow(/options must be an object/);
    });
  });

  describe('when given client tool declarations and tool handlers', () => {
    it('should keep the declarations, refuse the handlers and list what is wrong with a declaration', () => {
      const ask = { name: 'ask_user', description: 'Asks.', parameters: { type: 'object', properties: {} }, timeoutMs: 1_000 };
      expect(checkSubmitOptions({ prompt: 'x', clientTools: [ask] })).toEqual({ prompt: 'x', clientTools: [ask] });
      expect(() => checkSubmitOptions({ prompt: 'x', tools: [] } as never)).toThrow(/tools: not accepted by submit: tool handlers cannot travel .*clientTools/);
      expect(() => checkSubmitOptions({ clientTools: [{ name: '' }, { name: 'b', parameters: [], timeoutMs: -1 }] } as never)).toThrow(
        /clientTools\[0\]\.name: must be a non-empty string[\s\S]*clientTools\[1\]\.parameters: must be a JSON Schema object[\s\S]*clientTools\[1\]\.timeoutMs: must be a positive number/,
      );
    });
  });

  describe('when given serializable options', () => {
    it('should return a plain copy without undefined values', () => {
      expect(checkSubmitOptions({ prompt: 'hi', maxTurns: 3, sessionId: undefined })).toEqual({ prompt: 'hi', maxTurns: 3 });
    });

    it('should carry the model settings and a JSON Schema outputSchema, checked as start checks them', () => {
      const schema = { type: 'object', properties: { total: { type: 'integer' } } };
      const settings = { model: 'm', instructions: 'Be exact.', temperature: 0.1, topP: 0.5, maxOutputTokens: 10 };
      expect(checkSubmitOptions({ prompt: 'hi', outputSchema: schema, ...settings })).toEqual({ prompt: 'hi', outputSchema: schema, ...settings });
      expect(() => checkSubmitOptions({ temperature: -1 })).toThrow(/temperature: must be a number from 0 to 2; got -1/);
    });
  });

  describe('when given an outputSchema that is a class or a Standard Schema', () => {
    it('should refuse it, saying to pass its JSON Schema', () => {
      class Dto {}
      const zodLike = { '~standard': { version: 1, vendor: 'zod', validate: () => ({ value: {} }) } };
      for (const outputSchema of [Dto, zodLike])
        expect(() => checkSubmitOptions({ prompt: 'x', outputSchema } as never)).toThrow(
          /outputSchema: a class or a Standard Schema cannot travel to a worker in another process; pass its JSON Schema/,
        );
    });
  });
});

describe('SessionQueue', () => {
  // The only test here that needs a redis-server (the others need none, so they run everywhere).
  describeWithRedis('.submit with options a worker cannot receive', () => {
    let redis: RedisProcess | undefined;
    afterEach(async () => {
      await redis?.stop();
      redis = undefined;
    });

    it('should reject with invalid_options and enqueue nothing', async () => {
      redis = await startRedis();
      const store = new RedisSessionStore({ url: redis.url });
      const queue = await SessionQueue.connect({ redis: { url: redis.url }, store, queueName: 'refuse-q' });
      const probe = new Redis(redis.url);
      try {
        await expect(queue.submit({ prompt: 'x', confirmTool: () => true } as never)).rejects.toMatchObject({
          code: 'invalid_options',
          message: expect.stringMatching(/confirmTool/),
        });
        const bull = `${new DistributedKeys().bullPrefix}:refuse-q`;
        expect(await probe.keys(`${bull}:sub-*`)).toEqual([]);
        expect(await probe.llen(`${bull}:wait`)).toBe(0);
        expect(await probe.keys('agentrx:dist:*')).toEqual([]);
      } finally {
        probe.disconnect();
        await queue.close();
        await store.close();
      }
    });
  });

  describe('.connect when Redis is unreachable', () => {
    it('should fail with a store_error naming the URL with its password redacted', async () => {
      const port = await freePort();
      const secret = 'hunter2-very-secret';
      const store = new RedisSessionStore({ url: `redis://app:${secret}@127.0.0.1:${port}` });
      let error: unknown;
      try {
        await SessionQueue.connect({ redis: { url: `redis://app:${secret}@127.0.0.1:${port}` }, store });
      } catch (e) {
        error = e;
      }
      await store.close();
      expect(error).toMatchObject({ code: 'store_error', message: expect.stringContaining(`redis://***@127.0.0.1:${port}`) });
      expect(
        JSON.stringify({ message: (error as Error).message, details: (error as { details?: unknown }).details, cause: String((error as Error).cause) }),
      ).not.toContain(secret);
    });
  });
});
