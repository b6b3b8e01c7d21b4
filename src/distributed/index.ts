export { DEFAULT_KEY_PREFIX, DEFAULT_QUEUE_NAME, DistributedKeys, type SubmissionKeys } from './distributed-keys.js';
export type { InputMessage, OutputMessage, RemoteResult, WireError } from './distributed-messages.js';
export type { RedisLocation } from './redis-link.js';
export { RemoteSession } from './remote-session.js';
export { SessionQueue, type OpenRemoteOptions, type SessionQueueOptions } from './session-queue.js';
export { startWorker, type SessionWorker, type SessionWorkerOptions } from './session-worker.js';
export { checkSubmitOptions, type SessionJobData, type SubmitOptions } from './submit-options.js';
