export { createV2App, unsupportedVersionBody, VERSION_ERROR_STATUS, createVersionRouter, versionOpenApi, type V2AppServices } from './app';
export { versionRoutes, VERSIONS, type V2Services, type Version } from './routes';
export * from './schemas';
