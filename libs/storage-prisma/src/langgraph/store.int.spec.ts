import { runPrismaStoreSpecs } from '../testing/store-cases';

runPrismaStoreSpecs('postgresql');
