// Contracts an account of its own can use against the operator's relayer, deployed on the local chain: code that
// behaves one way where a simulation runs it (a bare eth_call sees a base fee of 0) and another on chain, and a
// recipient whose owner can make it refuse payments between a simulation and the block.
import { getAddress, parseAbi, type Address, type Hex } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import type { LocalChain } from "./chain";
import { deployer, mined } from "./contracts";
import { compileSolidity, type Compiled } from "@/test-chain/solidity";

const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Runs as the DeleGator (by delegatecall) only where the base fee is 0; reverts on chain.
contract Mimic {
    address immutable deleGator;
    constructor(address implementation) { deleGator = implementation; }
    fallback() external payable {
        require(block.basefee == 0, "only in simulations");
        (bool ok, bytes memory out) = deleGator.delegatecall(msg.data);
        assembly {
            switch ok
            case 0 { revert(add(out, 32), mload(out)) }
            default { return(add(out, 32), mload(out)) }
        }
    }
}

/// Takes the chain's coin only where the base fee is 0.
contract Picky {
    receive() external payable { require(block.basefee == 0, "only in simulations"); }
}

/// Takes the chain's coin until its owner closes it.
contract Gate {
    bool public closed;
    function close() external { closed = true; }
    receive() external payable { require(!closed, "closed"); }
}
`;

const compiled = new Map<string, Compiled>();
function artifact(name: "Mimic" | "Picky" | "Gate"): Compiled {
  if (!compiled.has(name)) compiled.set(name, compileSolidity("Hostile.sol", SOURCE, name));
  return compiled.get(name)!;
}

async function deploy(chain: LocalChain, name: "Mimic" | "Picky" | "Gate", args: unknown[] = []): Promise<Address> {
  const { abi, bytecode } = artifact(name);
  const wallet = await deployer(chain);
  return getAddress((await mined(chain, await wallet.deployContract({ abi, bytecode, args })))!);
}

/** A recipient that refuses the coin on chain but takes it in a simulation without fees. */
export const deployPicky = (chain: LocalChain) => deploy(chain, "Picky");

/** A recipient its owner (the node's first account) closes with `close()`. */
export async function deployGate(chain: LocalChain) {
  const address = await deploy(chain, "Gate");
  return {
    address,
    close: async () => {
      const wallet = await deployer(chain);
      await mined(chain, await wallet.writeContract({ address, abi: parseAbi(["function close()"]), functionName: "close" }));
    },
  };
}

/**
 * The person re-points their own address (EIP-7702, a type-4 transaction they send and pay for) at a Mimic of the
 * DeleGator `implementation`: the address then answers as the DeleGator in simulations only.
 */
export async function repointAtMimic(chain: LocalChain, person: PrivateKeyAccount, implementation: Address): Promise<Address> {
  const mimic = await deploy(chain, "Mimic", [implementation]);
  const nonce = await chain.client.getTransactionCount({ address: person.address });
  const authorization = await person.signAuthorization({ chainId: chain.chainId, contractAddress: mimic, nonce: nonce + 1 });
  const fees = await chain.client.estimateFeesPerGas();
  const signed = await person.signTransaction({
    type: "eip7702",
    chainId: chain.chainId,
    nonce,
    // not the address itself: its new code reverts on chain, and the authorization stands either way
    to: "0x000000000000000000000000000000000000dEaD",
    data: "0x" as Hex,
    gas: 100_000n,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    authorizationList: [authorization],
  });
  await mined(chain, await chain.client.request({ method: "eth_sendRawTransaction", params: [signed] }));
  return mimic;
}
