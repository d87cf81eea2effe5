#!/usr/bin/env node
/**
 * The `vite-plugin-insitu` executable: runs `runCli` on the process's arguments and sets the
 * exit code (runCli closes the engine, so no extension process outlives the command).
 */
import { runCli } from './main.js'

process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, cwd: process.cwd() })
