// Compile the contracts with the npm `solc` package (no native toolchain needed).
// Output: contracts/build/<Name>.json with { abi, bytecode }. Run: node contracts/build.mjs
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

const here = dirname(fileURLToPath(import.meta.url));
const sources = ["TestStablecoin.sol"];
const input = {
  language: "Solidity",
  sources: Object.fromEntries(sources.map((file) => [file, { content: readFileSync(join(here, file), "utf8") }])),
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: "cancun",
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors || []).filter((e) => e.severity === "error");
if (errors.length) {
  for (const error of errors) console.error(error.formattedMessage);
  process.exit(1);
}
mkdirSync(join(here, "build"), { recursive: true });
for (const file of sources) {
  for (const [name, contract] of Object.entries(output.contracts[file])) {
    const artifact = { contractName: name, compiler: solc.version(), abi: contract.abi, bytecode: "0x" + contract.evm.bytecode.object };
    writeFileSync(join(here, "build", `${name}.json`), JSON.stringify(artifact, null, 2) + "\n");
    console.log(`compiled ${name} (${contract.evm.bytecode.object.length / 2} bytes) with solc ${solc.version()}`);
  }
}
