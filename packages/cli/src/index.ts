export { runCli, buildProgram, CliError, VERSION, type CliServices, type CommandContext, type CommandModule, type Io } from './program';
