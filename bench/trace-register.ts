/** `node --import ./dist/bench/trace-register.js ...`: installs trace-hooks.js (see there). */
import { register } from 'node:module';

register(new URL('./trace-hooks.js', import.meta.url));
