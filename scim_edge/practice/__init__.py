"""Self-practice: question–answer pairs made from the user's own index, run through the
system and labelled, to fit the reader and the Critic (SIM-RAG §3.2)."""
