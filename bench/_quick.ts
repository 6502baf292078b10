import { peerFit } from './peers';
const fit = await peerFit(Number(process.env.PAIRS ?? 20));
console.log(JSON.stringify(fit, null, 0));
