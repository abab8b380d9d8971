export { runCli, USAGE, type Io } from './cli';
