// Uniswap's Permit2 and x402's exact Permit2 proxy on the tests' local chain, at the addresses `@x402/evm` names (the
// same on every chain: Permit2's canonical deployment, the proxy's CREATE2 address). Permit2 is compiled from the
// sources `@uniswap/v4-periphery` ships (its `lib/permit2`, solmate beside it), through the IR pipeline it was written
// for, by solc 0.8.26 (its exact `pragma 0.8.17` relaxed to `^0.8.17`); the node cannot deploy at those addresses, so
// each contract is deployed anywhere and its runtime code set at its address, Permit2's cached EIP-712 domain
// separator rewritten for the address it then answers at. No package ships the proxy: ours does what x402's
// specification and `@x402/evm`'s ABI of it say, for the `settle` path (no EIP-2612 `settleWithPermit`).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { encodeAbiParameters, keccak256, parseAbi, toHex, type Address, type Hex } from "viem";
import { PERMIT2_ADDRESS, x402ExactPermit2ProxyAddress } from "@x402/evm";
import type { LocalChain } from "./chain";
import { deploy } from "./contracts";
import { compileSolidity } from "@/test-chain/solidity";

const require = createRequire(import.meta.url);
const permit2Root = path.join(path.dirname(require.resolve("@uniswap/v4-periphery/package.json")), "lib/permit2");

/** A Permit2 source (or solmate's, which it imports as `solmate/…`), its pragma relaxed for this compiler. */
function permit2Source(file: string): string {
  const onDisk = file.startsWith("solmate/") ? path.join(permit2Root, "lib", file) : path.join(permit2Root, file);
  return readFileSync(onDisk, "utf8").replace("pragma solidity 0.8.17;", "pragma solidity ^0.8.17;");
}

const PROXY = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.17;
import {ISignatureTransfer} from "src/interfaces/ISignatureTransfer.sol";

/// Spends a payer's Permit2 signature only towards the address its witness names, for exactly the amount permitted.
contract ExactPermit2Proxy {
    ISignatureTransfer public constant PERMIT2 = ISignatureTransfer(${PERMIT2_ADDRESS});
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,uint256 validAfter)";
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,uint256 validAfter)");

    struct Witness {
        address to;
        uint256 validAfter;
    }

    event Settled();

    error InvalidAmount();
    error InvalidOwner();
    error InvalidDestination();
    error PaymentTooEarly();

    function settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external {
        if (permit.permitted.amount == 0) revert InvalidAmount();
        if (owner == address(0)) revert InvalidOwner();
        if (witness.to == address(0)) revert InvalidDestination();
        if (block.timestamp < witness.validAfter) revert PaymentTooEarly();
        PERMIT2.permitWitnessTransferFrom(
            permit,
            ISignatureTransfer.SignatureTransferDetails({to: witness.to, requestedAmount: permit.permitted.amount}),
            owner,
            keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.validAfter)),
            WITNESS_TYPE_STRING,
            signature
        );
        emit Settled();
    }
}
`;

/** Permit2's EIP-712 domain separator when it answers at `address` on `chainId`. */
function domainSeparator(chainId: number, address: Address): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: "bytes32" }, { type: "bytes32" }, { type: "uint256" }, { type: "address" }],
      [
        keccak256(toHex("EIP712Domain(string name,uint256 chainId,address verifyingContract)")),
        keccak256(toHex("Permit2")),
        BigInt(chainId),
        address,
      ],
    ),
  );
}

/** `code` answering at `address`, as if deployed there. */
async function setCode(chain: LocalChain, address: Address, code: Hex): Promise<void> {
  await chain.client.request({ method: "hardhat_setCode" as never, params: [address, code] as never });
}

/** Permit2 and the exact proxy at their addresses on `chain`; the compilation takes a few seconds. */
export async function deployPermit2(chain: LocalChain): Promise<void> {
  const optimized = { viaIR: true, optimizer: { enabled: true, runs: 200 } };
  const permit2 = compileSolidity("src/Permit2.sol", permit2Source("src/Permit2.sol"), "Permit2", permit2Source, optimized);
  const deployed = await deploy(chain, permit2, []);
  const code = (await chain.client.getCode({ address: deployed }))!;
  const [cached, canonical] = [domainSeparator(chain.chainId, deployed), domainSeparator(chain.chainId, PERMIT2_ADDRESS)];
  if (!code.includes(cached.slice(2))) throw new Error("Permit2's cached domain separator is not in its code");
  await setCode(chain, PERMIT2_ADDRESS, code.replaceAll(cached.slice(2), canonical.slice(2)) as Hex);
  const answered = await chain.client.readContract({
    address: PERMIT2_ADDRESS,
    abi: parseAbi(["function DOMAIN_SEPARATOR() view returns (bytes32)"]),
    functionName: "DOMAIN_SEPARATOR",
  });
  if (answered !== canonical) throw new Error("Permit2 does not answer with its own domain separator");

  const proxy = compileSolidity("ExactPermit2Proxy.sol", PROXY, "ExactPermit2Proxy", permit2Source, optimized);
  const proxyDeployed = await deploy(chain, proxy, []);
  await setCode(chain, x402ExactPermit2ProxyAddress, (await chain.client.getCode({ address: proxyDeployed }))!);
}
