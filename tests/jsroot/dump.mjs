// Reads RNTuples with JSROOT and writes their entries as JSON lines, for the
// Python tests (tests/python/test_write_jsroot.py):
//
//   node dump.mjs JSROOT_DIR JOBS.json
//
// JSROOT_DIR holds node_modules/jsroot (npm install jsroot@$(cat JSROOT_VERSION)).
// JOBS.json is a list of {"file", "ntuple", "fields": [...], "out"}: each job
// writes one JSON object per entry to "out" (the fields as JSROOT's
// rntupleProcess gives them), or "out.error" with JSROOT's error message.
// Numbers JSON cannot hold are written as strings: "nan", "inf", "-inf", "-0";
// BigInt as its decimal digits; typed arrays, Maps and Sets as arrays.
import { readFileSync, writeFileSync } from 'node:fs';

const [dir, jobsPath] = process.argv.slice(2);
const { openFile } = await import(`${dir}/node_modules/jsroot/modules/io.mjs`);
const { rntupleProcess } = await import(`${dir}/node_modules/jsroot/modules/rntuple.mjs`);
const { TSelector } = await import(`${dir}/node_modules/jsroot/modules/tree.mjs`);

function plain(v) {
   if (typeof v === 'bigint')
      return v.toString();
   if (typeof v === 'number') {
      if (Number.isNaN(v))
         return 'nan';
      if (!Number.isFinite(v))
         return v > 0 ? 'inf' : '-inf';
      return Object.is(v, -0) ? '-0' : v;
   }
   if (ArrayBuffer.isView(v) || Array.isArray(v))
      return Array.from(v, plain);
   if (v instanceof Map)
      return Array.from(v.entries(), ([k, x]) => [plain(k), plain(x)]);
   if (v instanceof Set)
      return Array.from(v.values(), plain);
   if (v && typeof v === 'object') {
      const out = {};
      for (const k of Object.keys(v))
         out[k] = plain(v[k]);
      return out;
   }
   return v;
}

async function dump(job) {
   const file = await openFile(job.file);
   const ntuple = await file.readObject(job.ntuple);
   if (!ntuple)
      throw new Error(`no RNTuple ${job.ntuple} in ${job.file}`);
   const selector = new TSelector();
   for (const f of job.fields)
      selector.addBranch(f);
   const lines = [];
   selector.Process = function() {
      const row = {};
      for (const f of job.fields)
         row[f] = plain(this.tgtobj[f]);
      lines.push(JSON.stringify(row));
   };
   await rntupleProcess(ntuple, selector);
   writeFileSync(job.out, lines.join('\n') + (lines.length ? '\n' : ''));
}

// JSROOT logs some failures to the console before throwing: keep stdout for results only.
console.error = () => {};
for (const job of JSON.parse(readFileSync(jobsPath, 'utf8'))) {
   try {
      await dump(job);
   } catch (err) {
      writeFileSync(`${job.out}.error`, String(err?.message ?? err).slice(0, 2000));
   }
}
