export type { ArtifactBody, ArtifactCallOptions, ArtifactDownload, ArtifactInfo, ArtifactPutOptions, Artifacts } from './artifacts.js';
export { checkArtifactName, MAX_ARTIFACT_NAME, PORTABLE_NAME, type ArtifactNameRule } from './artifact-name.js';
export { artifactNotFound, bytesOf, byteLengthOf, fixedChunks, isReplayable, newestNamed, newestPerName, readArtifact, readableOf } from './artifact-bytes.js';
