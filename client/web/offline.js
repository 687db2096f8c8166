// The old address of the record of challenges played by hand. The record now lives in
// the phone app itself (handplay.js), where it shares the outbox of every other move and
// so works with the server down: this page only forwards there, keeping a join link's
// fragment (#join=TOKEN&session=ID) and asking for the record form open (?hand).
location.replace(`./?hand${location.hash}`);
