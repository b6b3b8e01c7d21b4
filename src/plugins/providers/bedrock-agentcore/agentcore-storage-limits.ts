/**
 * The sizes of AgentCore's session-storage commands, apart from the code that sends them (which
 * needs the optional AWS SDK): the package's main entry exports them without that SDK's types.
 */

/**
 * Longest command agentrx sends, in characters: 64 KiB. Each write command carries at most
 * {@link AGENTCORE_CHUNK_BYTES} bytes of content (base64: 4 characters per 3 bytes) plus the
 * command around it, which stays under this cap.
 */
export const AGENTCORE_MAX_COMMAND_CHARS = 64 * 1024;

/** Content bytes per write command: 45 KiB (60 KiB of base64, under `AGENTCORE_MAX_COMMAND_CHARS`). */
export const AGENTCORE_CHUNK_BYTES = 45 * 1024;

/** Default `sessionStoragePath`: the harness's session storage mount. */
export const AGENTCORE_DEFAULT_STORAGE_PATH = '/mnt/data';
