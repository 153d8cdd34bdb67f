"""Human annotation (section 4.5 and appendix B of the paper).

Sample question-document-answer triplets from a finished pool (`sampling`, `texts`), export them
per annotator as a spreadsheet CSV and as Label Studio tasks (`export`), take the completed files
back (`importing`: CSV, XLSX, Label Studio JSON), or push and pull them through a Label
Studio server (`labelstudio`, over the SDK in `labelstudio_server`), and measure how well the
judge agrees with people and people with each other (`agreement`, `report`, `figures`). `items`
holds the records, `layout` the file names.
"""
