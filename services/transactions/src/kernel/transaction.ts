/** A recorded payment or transaction: the shape the transactions, payment requests and chain watcher share. */

export type TransactionType = 'pay' | 'sendTransaction';
export type TransactionStatus = 'pending' | 'mined' | 'failed';

export interface Transaction {
  id: string;
  appId: string;
  type: TransactionType;
  reference: string;
  transactionHash: string | null;
  status: TransactionStatus;
  from: string;
  to: string;
  chain: string;
  token: string;
  tokenAmount: string;
  /** Why it has its status, when known (the chain watcher's failure reasons), else null. */
  statusReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A code (`wrong_amount`) and a sentence for the operator. */
export interface Reason {
  code: string;
  detail: string;
}
